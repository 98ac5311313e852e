// Synchronous bulk: POST …/documents:bulk?sync=true writes a small JSON Lines body now and answers one
// item per line in input order (Elasticsearch's _bulk habit), a bad line failing alone; over the limits a 413 that
// names the limit and points to the queued bulk. Real models, store and Redis (helpers.js).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');

/** @type {import('../../server/start.js').RunningServer} */
let srv;
const KEY = { authorization: `Bearer ${h.API_KEY}` };
const NDJSON = { ...KEY, 'content-type': 'application/x-ndjson' };
const MAX = 6;

before(async () => {
  const { redis } = await h.setup();
  srv = await startServer({
    config: h.testConfig({ syncBulkMaxDocuments: MAX }), model: h.MODEL_A, redisUrl: redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0,
  });
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

/** @param {import('light-my-request').InjectOptions | string} opts */
const call = (opts) => h.inject(srv.app, opts);

/** @param {string} payload */
const syncBulk = (payload, collection = 'sync') => call({ method: 'POST', url: `/v1/collections/${collection}/documents:bulk?sync=true`, headers: NDJSON, payload });

test('sync bulk: one item per line in input order; bad lines fail alone; written documents are searchable at once', async () => {
  const [a, b] = h.sampleDocs();
  const lines = [
    JSON.stringify({ id: 's-1', title: a.title, body: a.body, category: 'news' }),
    JSON.stringify({ id: 's-2', title: 'no body' }),
    '',
    '{"id": "s-3", "body": ',
    JSON.stringify({ id: 's-4', body: b.body }),
    JSON.stringify({ id: 's-1', body: b.body }),
    JSON.stringify({ id: 's-5', body: '!!! ??? ...' }),
  ];
  const res = await syncBulk(lines.join('\n') + '\n');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.errors, true);
  assert.equal(res.body.collection, 'sync');
  const items = res.body.items;
  assert.deepEqual(items.map((/** @type {any} */ i) => [i.index, i.line, i.id, i.status, i.error?.code ?? i.result]), [
    [0, 1, 's-1', 200, 'written'],
    [1, 2, 's-2', 400, 'MISSING_FIELD'],
    [2, 4, undefined, 400, 'INVALID_JSON'],
    [3, 5, 's-4', 200, 'written'],
    [4, 6, 's-1', 400, 'DUPLICATE_ID'],
    [5, 7, 's-5', 422, 'NO_KNOWN_WORDS'],
  ]);
  assert.deepEqual(items[1].error, { code: 'MISSING_FIELD', message: 'field "body" is missing', line: 2, field: 'body' });
  assert.match(items[4].error.message, /first on line 1/);
  assert.ok(items[0].nnz > 0 && items[0].known_words > 0, JSON.stringify(items[0]));

  // Written now: readable and searchable before any queue runs; the rejected ones are not stored.
  const got = await call('/v1/collections/sync/documents/s-1');
  assert.equal(got.status, 200);
  assert.deepEqual([got.body.title, got.body.category], [a.title, 'news'], 'the first copy of s-1 won');
  for (const id of ['s-2', 's-5']) assert.equal((await call(`/v1/collections/sync/documents/${id}`)).status, 404, id);
  const rel = (await call('/v1/collections/sync/documents/s-4/related?k=5')).body;
  assert.deepEqual(rel.results.map((/** @type {any} */ r) => r.id), ['s-1']);

  // The same embed + write path as PUT: the same text gives the same vector (score 1 against its copy).
  const put = await call({ method: 'PUT', url: '/v1/collections/sync/documents/p-1', headers: KEY, payload: { title: a.title, body: a.body } });
  assert.equal(put.status, 200);
  assert.equal(put.body.nnz, items[0].nnz);
  const [twin, next] = (await call('/v1/collections/sync/documents/p-1/related?k=2&collapse=false&feedback=false')).body.results; // a twin is a near-duplicate
  assert.equal(twin.id, 's-1');
  // Scores come from the store's compact copy of the vectors (not exactly 1 for a twin).
  assert.ok(twin.score > 0.999 && twin.score > next.score, JSON.stringify([twin, next]));
});

test('sync bulk: all good lines -> errors false', async () => {
  const docs = h.sampleDocs().slice(2, 4);
  const res = await syncBulk(docs.map((d) => JSON.stringify({ id: d.id, body: d.body })).join('\n'));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.errors, false);
  assert.deepEqual(res.body.items.map((/** @type {any} */ i) => [i.id, i.status]), docs.map((d) => [d.id, 200]));
});

test('sync bulk over the limits: 413 naming the limit and pointing to the queued bulk; nothing written', async () => {
  const docs = h.sampleDocs().slice(10, 10 + MAX + 1);
  const res = await syncBulk(docs.map((d) => JSON.stringify({ id: `over-${d.id}`, body: d.body })).join('\n'), 'sync-over');
  assert.equal(res.status, 413, JSON.stringify(res.body));
  assert.equal(res.body.error, 'SCDV_BULK_SYNC_TOO_LARGE');
  assert.match(res.body.message, new RegExp(`at most ${MAX} documents \\(server\\.syncBulkMaxDocuments\\), this body has ${MAX + 1}`));
  assert.match(res.body.message, /without sync=true \(a queued job, follow GET \/v1\/jobs\/\{id\}\)/);
  assert.equal((await call(`/v1/collections/sync-over/documents/over-${docs[0].id}`)).status, 404);

  const big = JSON.stringify({ id: 'big', body: 'あ'.repeat(400_000) });
  const bytes = await syncBulk(big, 'sync-over');
  assert.equal(bytes.status, 413, JSON.stringify(bytes.body));
  assert.match(bytes.body.message, /at most 1048576 bytes \(server\.bodyLimit\)/);
});

test('sync bulk refuses an Elasticsearch _bulk body and a {"path"} body, naming why', async () => {
  const es = await syncBulk('{"index":{"_id":"e-1"}}\n{"body":"サッカー日本代表の試合を観戦。"}\n');
  assert.equal(es.status, 400);
  assert.equal(es.body.details.format, 'elasticsearch-bulk');
  const path = await call({ method: 'POST', url: '/v1/collections/sync/documents:bulk?sync=true', headers: KEY, payload: { path: 'x.jsonl' } });
  assert.equal(path.status, 422, JSON.stringify(path.body));
  assert.equal(path.body.details.field, 'querystring.sync');
  const empty = await syncBulk('\n\n');
  assert.equal(empty.status, 422);
  assert.equal(empty.body.error, 'SCDV_BULK_SOURCE_INVALID');
});

test('server.syncBulkMaxDocuments must be a positive integer (config error naming it)', async () => {
  const { loadConfig } = await import('../../pipeline/config.js');
  assert.throws(() => loadConfig({ overrides: { server: { syncBulkMaxDocuments: 0 } } }), { code: 'SCDV_CONFIG_INVALID', message: /server\.syncBulkMaxDocuments must be a positive integer, got 0/ });
});
