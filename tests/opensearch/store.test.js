// What the OpenSearch backend does across processes (two stores of one model stand for two hosts): a writer's
// handle finds a collection another created, a drop is seen by every other handle and a write racing it is
// refused without auto-creating an index, and a write through one invalidates the other's version within
// versionPollMs. Against a node started by the harness, or SCDV_TEST_OPENSEARCH_URL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../pipeline/config.js';
import { openModelStore } from '../../pipeline/store/index.js';
import { startOpenSearch } from '../lib/opensearch.js';

/** @type {Awaited<ReturnType<typeof startOpenSearch>> | null} */
let cluster = null;
let url = '';
const prefix = `scdv-st-${randomBytes(3).toString('hex')}-`;
/** @type {import('../../pipeline/config.js').Config} */
let config;

before(async () => {
  const external = process.env.SCDV_TEST_OPENSEARCH_URL;
  cluster = external ? null : await startOpenSearch({ nodes: 1 });
  url = external ?? /** @type {NonNullable<typeof cluster>} */ (cluster).urls[0];
  config = loadConfig({ overrides: { store: { backend: 'opensearch', opensearch: { nodes: [url], indexPrefix: prefix, replicas: 0, versionPollMs: 100 } } } });
});
after(async () => {
  await fetch(`${url}/${prefix}*`, { method: 'DELETE' }).catch(() => {});
  await cluster?.stop();
});

const doc = (/** @type {string} */ id) => ({ id, vector: { indices: [1, 2], values: [0.6, -0.8] }, meta: { title: id } });

test('two hosts: creation, versions and a drop are seen by the other; a write racing the drop creates nothing', async () => {
  const a = await openModelStore('m', config);
  const b = await openModelStore('m', config);
  try {
    const wa = await a.collection('c', { width: 10 });
    assert.equal(wa.createdAt, null);
    const wb = await b.collection('c', { width: 10 });
    await wb.upsert([doc('1'), doc('2')]);
    assert.equal(await wa.count(), 2, 'a writer\'s handle finds the collection another created');
    assert.equal(wa.createdAt, wb.createdAt);
    await assert.rejects(async () => a.collection('c', { width: 11 }), { code: 'SCDV_STORE_WIDTH_MISMATCH' });

    const before = await wa.version();
    await wb.upsert([doc('3')]);
    await new Promise((r) => setTimeout(r, 150));
    assert.ok((await wa.version()) > before, 'a write through the other host moves the version within versionPollMs');
    const hits = await wa.search({ indices: [1, 2], values: [0.6, -0.8] }, { k: 5 });
    assert.deepEqual(hits.map((h) => h.id), ['1', '2', '3'], 'searchable when acknowledged');
    assert.ok(Math.abs(hits[0].score - (Math.fround(0.6) ** 2 + Math.fround(-0.8) ** 2)) < 1e-6);

    await a.dropCollection('c');
    await assert.rejects(async () => wb.upsert([doc('4')]), { code: 'SCDV_COLLECTION_NOT_FOUND' });
    const index = await fetch(`${url}/${prefix}m--c`);
    assert.equal(index.status, 404, 'the refused write did not auto-create an index');
    await assert.rejects(async () => wb.get('1'), { code: 'SCDV_COLLECTION_NOT_FOUND' });
    await assert.rejects(async () => b.collection('c'), { code: 'SCDV_COLLECTION_NOT_FOUND' });
    const fresh = await b.collection('c', { width: 10 });
    assert.notEqual(fresh, wb);
    await fresh.upsert([doc('5')]);
    assert.deepEqual([...(await fresh.ids())], ['5']);
  } finally {
    await a.close();
    await b.close();
  }
});

test('two shards: filters and exact scores hold; stats report the index', async () => {
  const two = loadConfig({ overrides: { store: { backend: 'opensearch', opensearch: { nodes: [url], indexPrefix: prefix, shards: 2, replicas: 0 } } } });
  const s = await openModelStore('two', two);
  try {
    const c = await s.collection('c', { width: 50 });
    const docs = Array.from({ length: 200 }, (_, i) => ({
      id: `d${i}`, vector: { indices: [i % 50, (i * 7 + 1) % 50].sort((x, y) => x - y).filter((x, j, arr) => j === 0 || x !== arr[j - 1]), values: [1, -0.5].slice(0, i % 50 === (i * 7 + 1) % 50 ? 1 : 2) },
      meta: { site: i % 2 ? 'odd' : 'even' },
    }));
    await c.upsert(docs);
    const hits = await c.search({ indices: [3], values: [1] }, { k: 20, sites: ['odd'], mode: 'exact' });
    assert.ok(hits.length === 20 && hits.every((h) => /** @type {any} */ (h.meta).site === 'odd'));
    assert.ok(hits[0].score >= hits[hits.length - 1].score);
    const st = await c.stats();
    assert.equal(st.docs, 200);
    assert.ok(st.bytes > 0);
  } finally {
    await s.close();
  }
});
