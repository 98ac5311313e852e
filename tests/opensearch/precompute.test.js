// Batch precompute (workers/precompute.js) on the OpenSearch backend: a batch's pages are read in one getMany call
// (not a get each), and the related lists written are those the native store writes for the same vectors: the same
// ids, the same scores, each page itself excluded, a page not stored counted as missing. Against a node started by
// the harness, or SCDV_TEST_OPENSEARCH_URL; a private Redis.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-os-precompute-'));
process.env.SCDV_STORE_DIR = path.join(tmp, 'store');
const { loadConfig } = await import('../../pipeline/config.js');
const { openModelStore } = await import('../../pipeline/store/index.js');
const { startPrivateRedis, redisOptions } = await import('../../pipeline/queue/redis.js');
const { processPrecompute, closePrecomputeStores } = await import('../../workers/precompute.js');
const { keys } = await import('../../pipeline/match/index.js');
const { testOpenSearch } = await import('../lib/opensearch.js');

/** @type {Awaited<ReturnType<typeof testOpenSearch>> | undefined} */
let node;
let url = '';
let prefix = '';
/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redisServer;

before(async () => {
  [node, redisServer] = await Promise.all([testOpenSearch('pc'), startPrivateRedis()]);
  ({ url, prefix } = node);
});
after(async () => {
  await closePrecomputeStores();
  await Promise.all([node?.stop(), redisServer?.stop()]);
  fs.rmSync(tmp, { recursive: true, force: true });
});

const WIDTH = 400;
const N = 300;

/**
 * Deterministic sparse vectors, 24 of 400 dims each, signed, with overlapping supports; the values are eighths with
 * a largest magnitude of 1, which both backends store exactly (native: float16 with a per-document scale), so the
 * two backends' scores can be compared to 1e-6.
 */
function vectorOf(/** @type {number} */ i) {
  const dims = new Set();
  for (let j = 0; dims.size < 24; j++) dims.add((i * 37 + j * j * 13 + (i % 7) * j) % WIDTH);
  const indices = [...dims].sort((a, b) => a - b);
  const values = indices.map((d, j) => (j === 0 ? 1 : (((i * 5 + d * 3 + j) % 15) - 7 || 3) / 8));
  return { indices, values };
}

test('precompute on OpenSearch reads its pages in one call and writes the related lists the native store writes', async () => {
  const redis = new Redis(redisOptions(redisServer.url));
  /** @type {Record<string, any[]>} */
  const lists = {};
  let getManyCalls = 0;
  let getCalls = 0;
  try {
    for (const backend of /** @type {const} */ (['native', 'opensearch'])) {
      const config = loadConfig({ overrides: { store: { backend, opensearch: { nodes: [url], indexPrefix: prefix, shards: 2, replicas: 0 } } } });
      const store = await openModelStore('pc', config);
      const c = await store.collection('pages', { width: WIDTH });
      await c.upsert(Array.from({ length: N }, (_, i) => ({ id: `p${i}`, vector: vectorOf(i), meta: { title: `page ${i}` } })));
      assert.deepEqual([...(/** @type {any} */ (await c.get('p5'))).vector.values], vectorOf(5).values, `${backend} stores the values exactly`);
      if (backend === 'opensearch') {
        assert.equal(c.capabilities.getMany, true, 'OpenSearch declares getMany');
        // Count the reads the worker makes through this backend's handles (the worker opens its own store).
        const proto = Object.getPrototypeOf(c);
        const { getMany, get } = proto;
        proto.getMany = function (/** @type {string[]} */ ids) { getManyCalls++; return getMany.call(this, ids); };
        proto.get = function (/** @type {string} */ id) { getCalls++; return get.call(this, id); };
        try {
          lists[backend] = await runBatch(redis, config, backend);
        } finally {
          proto.getMany = getMany;
          proto.get = get;
        }
      } else {
        lists[backend] = await runBatch(redis, config, backend);
      }
      await closePrecomputeStores();
      await store.close();
    }
  } finally {
    redis.disconnect();
  }
  assert.equal(getManyCalls, 2, 'one getMany per 100 pages of the batch (150 pages)');
  assert.equal(getCalls, 0, 'no get per page');
  const [native, open] = [lists.native, lists.opensearch];
  assert.equal(open.length, native.length);
  for (let i = 0; i < native.length; i++) {
    const [a, b] = [native[i], open[i]];
    assert.ok(a.results.length === 10 && !a.results.some((/** @type {any} */ r) => r.id === a.id), `${a.id}: 10 results, itself excluded`);
    assert.deepEqual(b.results.map((/** @type {any} */ r) => r.id), a.results.map((/** @type {any} */ r) => r.id), `${a.id}: the native store's list`);
    b.results.forEach((/** @type {any} */ r, /** @type {number} */ j) => assert.ok(Math.abs(r.score - a.results[j].score) < 1e-6, `${a.id} #${j}: ${r.score} vs ${a.results[j].score}`));
  }
});

/**
 * Precompute 149 stored pages and one that is not, exact mode; the entries written, in order.
 * @param {Redis} redis
 * @param {import('../../pipeline/config.js').Config} config
 * @param {string} backend
 */
async function runBatch(redis, config, backend) {
  const ids = [...Array.from({ length: 149 }, (_, i) => `p${i * 2}`), 'not-stored'];
  const job = { run: 'test', model: 'pc', source: 'pages', target: 'pages', k: 10, ids, ttlSeconds: 600, prefix: `{pc-${backend}}`, mode: /** @type {const} */ ('exact') };
  const r = await processPrecompute(job, redis, undefined, config);
  assert.deepEqual(r, { written: 149, missing: 1 }, `${backend}: every stored page written, the other one missing`);
  const k = keys(job.prefix);
  const raw = await Promise.all(ids.slice(0, 149).map((id) => redis.get(k.entry('pc', 'pages', 'pages', id))));
  return raw.map((e) => JSON.parse(/** @type {string} */ (e)));
}

test('the match threshold derived on OpenSearch reads pages and ads in a few getMany calls and equals the native store\'s', async () => {
  const { deriveMatchThreshold } = await import('../../pipeline/match/threshold.js');
  /** @type {Record<string, any>} */
  const derived = {};
  const calls = { getMany: 0, get: 0 };
  const labels = ['a', 'b', 'c'];
  for (const backend of /** @type {const} */ (['native', 'opensearch'])) {
    const config = loadConfig({ overrides: { store: { backend, opensearch: { nodes: [url], indexPrefix: prefix, shards: 2, replicas: 0 } } } });
    const store = await openModelStore('th', config);
    try {
      const pages = await store.collection('pages', { width: WIDTH });
      const ads = await store.collection('ads', { width: WIDTH });
      // Word counts in the pages' metadata, as every write keeps them (the known-word rule's default is derived too).
      await pages.upsert(Array.from({ length: N }, (_, i) => ({ id: `p${i}`, vector: vectorOf(i), meta: { category: labels[i % 3], known_words: 50 + (i % 40), unknown_words: 10 } })));
      await ads.upsert(Array.from({ length: 40 }, (_, i) => ({ id: `ad${i}`, vector: vectorOf(1000 + i), meta: { category: labels[i % 3] } })));
      await pages.flush();
      await ads.flush();
      if (backend === 'opensearch') {
        const proto = Object.getPrototypeOf(pages);
        const { getMany, get } = proto;
        proto.getMany = function (/** @type {string[]} */ ids) { calls.getMany++; return getMany.call(this, ids); };
        proto.get = function (/** @type {string} */ id) { calls.get++; return get.call(this, id); };
        try {
          derived[backend] = await deriveMatchThreshold(pages, ads, { source: 'pages', quantile: 0.99, knownShareRatio: 0.5 });
        } finally {
          proto.getMany = getMany;
          proto.get = get;
        }
      } else {
        derived[backend] = await deriveMatchThreshold(pages, ads, { source: 'pages', quantile: 0.99, knownShareRatio: 0.5 });
      }
    } finally {
      await store.close();
    }
  }
  assert.equal(calls.get, 0, 'no get a document at a time');
  assert.equal(calls.getMany, 3, 'one getMany for the known-word sample (300 pages), one for the 40 ads, one for the pages scored');
  const strip = (/** @type {any} */ t) => ({ ...t, computed_at: null });
  assert.ok(derived.native && derived.native.pairs > 1000, `the native store derives from labelled pairs: ${JSON.stringify(derived.native)}`);
  assert.deepEqual(strip(derived.opensearch), strip(derived.native));
});
