// `scdv index` into OpenSearch as a bulk load: the collection's index refreshes every 10 s during the load and a new
// one holds no replica, the settings to restore recorded in its `_meta` first; they are put back when the run ends,
// when it fails, and (a load whose process died) by the next load's end. A large load ends merged to one segment.
// On OpenSearch a write is a bulk request of store.opensearch.bulkDocs documents. Against a node started by the
// harness, or SCDV_TEST_OPENSEARCH_URL; Redis and the sample model as the stage tests have them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scdv-os-load-'));
process.env.SCDV_MODELS_DIR = path.join(tmp, 'models');
process.env.SCDV_DATA_DIR = path.join(tmp, 'data');
process.env.SCDV_STORE_DIR = path.join(tmp, 'store');
const { loadConfig } = await import('../../pipeline/config.js');
const { openModelStore } = await import('../../pipeline/store/index.js');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { runIndex } = await import('../../pipeline/stages/indexing.js');
const { writeBatchSizeOf } = await import('../../pipeline/queue/job-schemas.js');
const { ensureSampleModels } = await import('../lib/tiny-model.js');
const { testOpenSearch } = await import('../lib/opensearch.js');

const SAMPLE = 'tests/fixtures/livedoor/sample.jsonl';
const lines = fs.readFileSync(SAMPLE, 'utf8').trim().split('\n');

/** @type {Awaited<ReturnType<typeof testOpenSearch>> | undefined} */
let node;
let url = '';
let prefix = '';
/** @type {import('../../pipeline/queue/redis.js').PrivateRedis} */
let redis;

before(async () => {
  [node, redis] = await Promise.all([testOpenSearch('ld'), startPrivateRedis()]);
  ({ url, prefix } = node);
  await ensureSampleModels({ names: ['small'], redisUrl: redis.url });
});
after(async () => {
  await Promise.all([node?.stop(), redis?.stop()]);
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Replicas 1 on one node: the index stays yellow, but its settings say what a cluster would do. */
const config = (/** @type {Record<string, any>} */ opensearch = {}, /** @type {Record<string, any>} */ more = {}) => loadConfig({ overrides: {
  store: { backend: 'opensearch', opensearch: { nodes: [url], indexPrefix: prefix, replicas: 1, ...opensearch } },
  index: { shardSize: 200, workers: 1 }, queue: { backoffMs: 200, attempts: 1 }, ...more,
} });

/** @param {string} collection @returns {Promise<{refresh: string, replicas: number, load: any, segments: number}>} */
async function indexState(collection) {
  const index = `${prefix}small--${collection}`;
  const settings = /** @type {any} */ (await (await fetch(`${url}/${index}/_settings`)).json())[index].settings.index;
  const mapping = /** @type {any} */ (await (await fetch(`${url}/${index}/_mapping`)).json())[index].mappings;
  const stats = /** @type {any} */ (await (await fetch(`${url}/${index}/_stats/segments`)).json());
  return { refresh: settings.refresh_interval, replicas: Number(settings.number_of_replicas), load: mapping._meta.scdv.load, segments: stats._all.primaries.segments.count };
}

const doc = (/** @type {string} */ id) => ({ id, vector: { indices: [1, 2], values: [0.6, -0.8] }, meta: {} });

test('a load: settings for the load and what to restore recorded; a second load (the first one\'s process died) keeps them; the end restores them', async () => {
  const a = await openModelStore('small', config());
  const b = await openModelStore('small', config());
  try {
    assert.deepEqual(await a.beginLoad?.('fresh', 10), { created: true });
    let s = await indexState('fresh');
    assert.equal(s.refresh, '10s');
    assert.equal(s.replicas, 0, 'a new index holds no replica during its load');
    assert.deepEqual(s.load.restore, { refresh_interval: '1s', number_of_replicas: 1 });
    const c = await a.collection('fresh', { width: 10 });
    await c.upsert([doc('1'), doc('2')], { refresh: false });
    await c.upsert([doc('3')]); // waits for searchability: up to the load's refresh interval
    assert.equal(await c.count(), 3);

    // Process a died: b starts another load of the collection, which finds the record and keeps it.
    assert.deepEqual(await b.beginLoad?.('fresh', 10), { created: false });
    assert.deepEqual((await indexState('fresh')).load.restore, { refresh_interval: '1s', number_of_replicas: 1 });
    assert.equal(await b.endLoad?.('fresh'), true);
    s = await indexState('fresh');
    assert.deepEqual([s.refresh, s.replicas, s.load], ['1s', 1, undefined], 'settings restored, record removed');
    assert.equal(await b.endLoad?.('fresh'), false, 'no load to end');

    // An existing index keeps its replicas during a load; the width is checked.
    await assert.rejects(async () => b.beginLoad?.('fresh', 11), { code: 'SCDV_STORE_WIDTH_MISMATCH' });
    assert.deepEqual(await b.beginLoad?.('fresh', 10), { created: false });
    s = await indexState('fresh');
    assert.deepEqual([s.refresh, s.replicas], ['10s', 1]);
    await b.endLoad?.('fresh');
    assert.equal((await indexState('fresh')).refresh, '1s');
  } finally {
    await a.close();
    await b.close();
  }
});

test('scdv index into OpenSearch: bulks of store.opensearch.bulkDocs, settings restored, merged to one segment', { timeout: 240_000 }, async () => {
  const cfg = config({ bulkDocs: 64, compactAfterDocs: 100 });
  assert.equal(writeBatchSizeOf(cfg), 64);
  assert.equal(writeBatchSizeOf(loadConfig({})), loadConfig({}).index.writeBatchSize, 'the native store: index.writeBatchSize');
  assert.equal(loadConfig({}).store.opensearch.bulkDocs, writeBatchSizeOf(config()), "OpenSearch's default: bulkDocs");
  /** @type {string[]} */
  const logged = [];
  const s = await runIndex({ corpus: SAMPLE, model: 'small', collection: 'articles', config: cfg, redisUrl: redis.url, quiet: true, log: (m) => logged.push(m) });
  assert.equal(s.writeBatchSize, 64);
  assert.equal(s.writes, Math.ceil(200 / 64) + Math.ceil((lines.length - 200) / 64), 'two shards of 200 and 106 lines, bulks of 64');
  const st = await indexState('articles');
  assert.deepEqual([st.refresh, st.replicas, st.load], ['1s', 1, undefined], 'the load\'s settings are gone');
  assert.equal(st.segments, 1, 'merged to one segment');
  assert.ok(logged.some((m) => /merged articles to 1 segment, \d+ bytes a document/.test(m)), logged.join('\n'));
  const store = await openModelStore('small', cfg);
  try {
    assert.equal((await store.collectionInfo('articles'))?.count, s.documents);
  } finally {
    await store.close();
  }
});

test('a failed load restores the settings; a load that wrote nothing leaves no collection', { timeout: 240_000 }, async () => {
  const cfg = config({}, { queue: { backoffMs: 100, attempts: 1 } });
  const store = await openModelStore('small', cfg);
  const index = `${prefix}small--blocked`;
  try {
    // The collection exists; a write block set once the workers are up makes every bulk of the second run fail.
    const first = await runIndex({ corpus: SAMPLE, model: 'small', collection: 'blocked', config: cfg, redisUrl: redis.url, quiet: true, log: () => {} });
    assert.ok(first.documents > 0);
    const runDir = path.join(tmp, 'data', 'runs', 'index');
    fs.rmSync(runDir, { recursive: true, force: true }); // the next run redoes every shard
    await assert.rejects(runIndex({
      corpus: SAMPLE, model: 'small', collection: 'blocked', config: cfg, redisUrl: redis.url, quiet: true, log: () => {},
      onWorkersStarted: () => {
        void fetch(`${url}/${index}/_settings`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ index: { 'blocks.write': true } }) });
      },
    }));
    const st = await indexState('blocked');
    assert.deepEqual([st.refresh, st.replicas, st.load], ['1s', 1, undefined], 'restored after the failure');
  } finally {
    await fetch(`${url}/${index}/_settings`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ index: { 'blocks.write': null } }) });
    await store.close();
  }
  // Every line rejected (no body; the run fails as unusable): the collection beginLoad made for it is dropped again.
  const empty = path.join(tmp, 'empty.jsonl');
  fs.writeFileSync(empty, lines.slice(0, 5).map((l) => JSON.stringify({ id: JSON.parse(l).id })).join('\n') + '\n');
  await assert.rejects(runIndex({ corpus: empty, model: 'small', collection: 'nothing', config: cfg, redisUrl: redis.url, quiet: true, log: () => {} }), { code: 'SCDV_CORPUS_UNUSABLE' });
  assert.equal((await fetch(`${url}/${prefix}small--nothing`)).status, 404, 'no collection left');
});
