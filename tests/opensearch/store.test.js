// What the OpenSearch backend does across processes (two stores of one model stand for two hosts): a writer's
// handle finds a collection another created, a drop is seen by every other handle and a write racing it is
// refused without auto-creating an index, and a write through one invalidates the other's version within
// versionPollMs. Against a node started by the harness, or SCDV_TEST_OPENSEARCH_URL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../pipeline/config.js';
import { openModelStore } from '../../pipeline/store/index.js';
import { testOpenSearch } from '../lib/opensearch.js';

/** @type {Awaited<ReturnType<typeof testOpenSearch>> | undefined} */
let node;
let url = '';
let prefix = '';
/** @type {import('../../pipeline/config.js').Config} */
let config;

before(async () => {
  node = await testOpenSearch('st');
  ({ url, prefix } = node);
  config = loadConfig({ overrides: { store: { backend: 'opensearch', opensearch: { nodes: [url], indexPrefix: prefix, replicas: 0, versionPollMs: 100 } } } });
});
after(async () => {
  await node?.stop();
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

test('layout: the vector is a doc value only (no vector in _source), read back exactly, before a flush too; feature counts kept after a flush', async () => {
  const s = await openModelStore('lay', config);
  try {
    const c = await s.collection('c', { width: 1000 });
    const v = { indices: [3, 500, 999], values: [0.1234567, -0.75, 2.5e-5] };
    await c.upsert([{ id: 'a', vector: v, meta: { t: 1 } }], { refresh: false });
    assert.deepEqual([...(/** @type {any} */ (await c.get('a'))?.vector.indices ?? [])], v.indices, 'a batch write is read back before its flush');
    await c.flush();
    const raw = /** @type {any} */ (await (await fetch(`${url}/${prefix}lay--c/_doc/a`)).json());
    assert.deepEqual(Object.keys(raw._source).sort(), ['id', 'meta'], 'neither the features nor the vector are kept in _source');
    const got = await c.get('a');
    assert.deepEqual([...(got?.vector.indices ?? [])], v.indices);
    assert.deepEqual([...(got?.vector.values ?? [])], v.values.map(Math.fround));
    const counts = /** @type {any} */ (await (await fetch(`${url}/${prefix}meta/_doc/lay--c.df`)).json());
    assert.equal(counts._source?.docs, 1, 'the flush counted the features');
    assert.equal(counts._source?.postings, 3);
  } finally {
    await s.close();
  }
});

test('fast search spends a postings budget on the query\'s rarer terms; exact mode still proves its top k', async () => {
  // Term 0 is in every document (500 postings), terms 1..50 in ten each. With a budget of 100 postings the fast
  // search skips term 0, the query's largest, and still ranks by the exact dot product in the engine.
  const tight = loadConfig({ overrides: { store: { backend: 'opensearch', opensearch: { nodes: [url], indexPrefix: prefix, replicas: 0, postingsBudget: { min: 100, fraction: 0 } } } } });
  const s = await openModelStore('bud', tight);
  try {
    const c = await s.collection('c', { width: 60 });
    const docs = Array.from({ length: 500 }, (_, i) => ({ id: `d${i}`, vector: { indices: [0, 1 + (i % 50)], values: [0.5 + (i % 7) / 100, 0.3] } }));
    await c.upsert(docs, { refresh: false });
    await c.flush();
    const q = { indices: [0, 7], values: [0.9, 0.01] };
    const dot = (/** @type {number} */ i) => Math.fround(0.5 + (i % 7) / 100) * Math.fround(0.9) + (i % 50 === 6 ? Math.fround(0.3) * Math.fround(0.01) : 0);
    const want = docs.map((d, i) => ({ id: d.id, score: dot(i) })).sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1)).slice(0, 5);
    const fast = await c.search(q, { k: 5 });
    assert.ok(fast.every((h) => /^d\d+$/.test(h.id) && (Number(h.id.slice(1)) % 50) === 6), 'the candidates came from the budgeted term 7 alone');
    for (const h of fast) assert.equal(h.score, dot(Number(h.id.slice(1))), 'exact scores from the engine');
    const exact = await c.search(q, { k: 5, mode: 'exact' });
    assert.deepEqual(exact.map((h) => [h.id, h.score]), want.map((h) => [h.id, h.score]), 'exact mode asks for every term and proves the top k');
    assert.notDeepEqual(fast.map((h) => h.id), exact.map((h) => h.id), 'the budget changed the fast candidates (term 0 was skipped)');
  } finally {
    await s.close();
  }
});

test('an index of the previous layout (format 2) is refused with how to re-index it', async () => {
  const index = `${prefix}old--c`;
  // Format 2's `f` was a rank_features field, a type of the mapper-extras module, which set-up no longer installs:
  // the index gets format 2's _meta and `v`; the refusal reads the format from _meta.
  const put = await fetch(`${url}/${index}`, {
    method: 'PUT', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mappings: { _meta: { scdv: { model: 'old', collection: 'c', width: 10, created_at: new Date().toISOString(), format: 2 } }, properties: { v: { type: 'binary', doc_values: true } } } }),
  });
  assert.equal(put.status, 200);
  const s = await openModelStore('old', config);
  try {
    await assert.rejects(async () => s.collection('c'), (/** @type {any} */ err) => {
      assert.equal(err.code, 'SCDV_STORE_FORMAT_UNSUPPORTED');
      assert.match(err.message, /layout format 2; this version reads format 3/);
      assert.match(err.message, /scdv collection delete c --model old/);
      assert.match(err.message, /scdv index/);
      return true;
    });
  } finally {
    await s.close();
  }
});
