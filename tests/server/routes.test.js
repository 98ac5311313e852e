// Every route and every error of the REST server, through fastify.inject, against real parts: two small
// models trained on the bundled sample, the real store, a private Redis, a real index worker process.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';

const h = await import('./helpers.js');
const { waitFor } = await import('../lib/wait.js');
const { startServer } = await import('../../server/start.js');
const { runPrecompute } = await import('../../pipeline/stages/precompute.js');
const { localPrecompute } = await import('../../workers/precompute.js');
const { keys } = await import('../../pipeline/match/index.js');
const { startPrivateRedis } = await import('../../pipeline/queue/redis.js');
const { dataDir } = await import('../../pipeline/paths.js');
const { DEFAULT_CONFIG } = await import('../../pipeline/config.js');
const { QUEUE_NAMES } = await import('../../pipeline/queue/queues.js');

/** @type {import('../../server/start.js').RunningServer} */
let srv;
/** @type {string} */
let redisUrl;
const KEY = { authorization: `Bearer ${h.API_KEY}` };
const DOC = 'sports-watch-4597641';

before(async () => {
  ({ redis: { url: redisUrl } } = await h.setup());
  srv = await startServer({ config: h.testConfig({ bulkBodyLimit: 400_000 }), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 1 });
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

/**
 * @param {import('light-my-request').InjectOptions | string} opts
 */
async function call(opts) {
  const res = await srv.app.inject(opts);
  const body = res.headers['content-type']?.toString().includes('json') ? res.json() : res.body;
  // Every related/match answer has its own request id (tests/events/api.test.js checks them): compared without it.
  if (body && typeof body === 'object') delete body.request_id;
  return { status: res.statusCode, body, headers: res.headers };
}

/** @param {{status: number, body: any}} r @param {number} status @param {string} code */
function assertError(r, status, code) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.error, code);
  assert.equal(typeof r.body.message, 'string');
  assert.deepEqual(Object.keys(r.body).filter((k) => !['error', 'message', 'details'].includes(k)), [], 'stable shape');
}

test('health, readiness, collections', async () => {
  assert.deepEqual((await call('/healthz')).body, { status: 'ok' });
  const ready = await call('/readyz');
  assert.equal(ready.status, 200);
  assert.deepEqual(ready.body, { status: 'ready', model: h.MODEL_A, store: true, backend: { ok: true, backend: 'native' }, redis: 'up' });
  const c = await call('/v1/collections');
  assert.equal(c.body.model, h.MODEL_A);
  assert.deepEqual(c.body.collections.map((/** @type {any} */ x) => [x.name, x.count]), [['ads', 5], ['articles', 306]]);
});

test('document metadata; unknown document, unknown collection, names with path tricks', async () => {
  const d = await call(`/v1/collections/articles/documents/${DOC}`);
  assert.equal(d.status, 200);
  assert.equal(d.body.id, DOC);
  assert.equal(d.body.category, 'sports-watch');
  assert.match(d.body.url, /^http:\/\/news\.livedoor\.com\//);
  assert.ok(d.body.nnz > 0);
  assertError(await call('/v1/collections/articles/documents/nope'), 404, 'SCDV_DOCUMENT_NOT_FOUND');
  assertError(await call('/v1/collections/missing/documents/x'), 404, 'SCDV_COLLECTION_NOT_FOUND');
  // A literal "/../" is resolved by the URL parser before routing: it can only reach another route.
  assert.notEqual((await call('/v1/collections/%2E%2E/documents/x')).status, 200);
  for (const bad of ['..%2Fetc', 'Articles', 'a%2Fb', '-x', '.hidden']) {
    const r = await call(`/v1/collections/${bad}/documents/x`);
    assertError(r, 400, 'SCDV_REQUEST_INVALID');
    assert.equal(r.body.details.field, 'params.collection');
  }
});

test('related by id: k results, itself excluded, best first, filters, bounds', async () => {
  const r = await call(`/v1/collections/articles/documents/${DOC}/related?k=7`);
  assert.equal(r.status, 200);
  assert.equal(r.body.results.length, 7);
  assert.ok(!r.body.results.some((/** @type {any} */ x) => x.id === DOC), 'the document itself is excluded');
  for (let i = 1; i < 7; i++) assert.ok(r.body.results[i - 1].score >= r.body.results[i].score);
  for (const x of r.body.results) assert.deepEqual(Object.keys(x).sort(), ['category', 'id', 'published_at', 'score', 'title', 'url']);
  const hits = async () => Number(/scdv_related_cache_total\{result="hit"\} (\d+)/.exec((await call('/metrics')).body)?.[1] ?? 0);
  const hits0 = await hits();
  const again = await call(`/v1/collections/articles/documents/${DOC}/related?k=7`);
  assert.deepEqual(again.body, r.body, 'asked for again: the same answer (computed again, now kept)');
  const third = await call(`/v1/collections/articles/documents/${DOC}/related?k=7`);
  assert.deepEqual(third.body, r.body, 'a cached answer is the same answer');
  assert.equal(await hits(), hits0 + 1, 'the third was served from the cache (metrics recorded)');

  const cat = await call(`/v1/collections/articles/documents/${DOC}/related?k=5&category=movie-enter&category=peachy`);
  for (const x of cat.body.results) {
    const meta = (await call(`/v1/collections/articles/documents/${x.id}`)).body;
    assert.ok(['movie-enter', 'peachy'].includes(meta.category), meta.category);
  }
  const since = '2011-06-01T00:00:00Z';
  const until = '2011-12-31T23:59:59Z';
  const win = await call(`/v1/collections/articles/documents/${DOC}/related?k=10&since=${since}&until=${until}`);
  assert.ok(win.body.results.length > 0);
  for (const x of win.body.results) assert.ok(x.published_at >= '2011-06-01' && x.published_at <= '2012', x.published_at);

  const k0 = await call(`/v1/collections/articles/documents/${DOC}/related?k=0`);
  assertError(k0, 400, 'SCDV_REQUEST_INVALID');
  assert.equal(k0.body.details.field, 'querystring.k');
  assertError(await call(`/v1/collections/articles/documents/${DOC}/related?k=1001`), 400, 'SCDV_REQUEST_INVALID');
  assertError(await call(`/v1/collections/articles/documents/${DOC}/related?since=yesterday`), 400, 'SCDV_REQUEST_INVALID');
  assertError(await call(`/v1/collections/articles/documents/${DOC}/related?since=2012-01-01&until=2011-01-01`), 422, 'SCDV_FILTER_RANGE_EMPTY');
  const extra = await call(`/v1/collections/articles/documents/${DOC}/related?sort=date`);
  assertError(extra, 400, 'SCDV_REQUEST_INVALID');
  assert.equal(extra.body.details.field, 'querystring.sort');
  assertError(await call('/v1/collections/articles/documents/nope/related'), 404, 'SCDV_DOCUMENT_NOT_FOUND');
  assertError(await call('/v1/collections/missing/documents/x/related'), 404, 'SCDV_COLLECTION_NOT_FOUND');
});

test('related for a text: embedded at request time; 422 without known words; 400/413/415', async () => {
  const text = 'サッカー日本代表の試合でゴールを決めた選手と監督のコメント。ワールドカップ予選の結果。';
  const r = await call({ method: 'POST', url: '/v1/collections/articles/related', payload: { title: 'サッカー', text, k: 5, filters: { category: ['sports-watch'] } } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.results.length, 5);
  assert.ok(r.body.known_words > 0);
  // Results carry no category; the sample's ids start with theirs (e.g. sports-watch-4597641).
  for (const x of r.body.results) assert.ok(x.id.startsWith('sports-watch-'), `the category filter let ${x.id} through`);
  const other = await call({ method: 'POST', url: '/v1/collections/articles/related', payload: { text, k: 5, filters: { category: ['it-life-hack'] } } });
  assert.equal(other.status, 200, JSON.stringify(other.body));
  assert.ok(other.body.results.length > 0 && other.body.results.every((/** @type {any} */ x) => x.id.startsWith('it-life-hack-')), JSON.stringify(other.body.results));
  assertError(await call({ method: 'POST', url: '/v1/collections/articles/related', payload: { text: '！？。、…… 123 456' } }), 422, 'SCDV_NO_USABLE_WORDS');
  const missing = await call({ method: 'POST', url: '/v1/collections/articles/related', payload: { k: 3 } });
  assertError(missing, 400, 'SCDV_REQUEST_INVALID');
  assert.equal(missing.body.details.field, 'body.text');
  const badFilter = await call({ method: 'POST', url: '/v1/collections/articles/related', payload: { text, filters: { since: 'soon' } } });
  assert.equal(badFilter.body.details.field, 'body.filters.since');
  assertError(await call({ method: 'POST', url: '/v1/collections/articles/related', payload: 'x'.repeat(DEFAULT_CONFIG.server.bodyLimit + 1), headers: { 'content-type': 'application/json' } }), 413, 'SCDV_BODY_TOO_LARGE');
  assertError(await call({ method: 'POST', url: '/v1/collections/articles/related', payload: '{"text": ', headers: { 'content-type': 'application/json' } }), 400, 'SCDV_REQUEST_INVALID');
  assertError(await call({ method: 'POST', url: '/v1/collections/articles/related', payload: '<text/>', headers: { 'content-type': 'application/xml' } }), 415, 'SCDV_MEDIA_TYPE_UNSUPPORTED');
  const r415 = await call({ method: 'POST', url: '/v1/collections/articles/related', payload: '<text/>', headers: { 'content-type': 'application/xml' } });
  assert.match(r415.body.message, /^content type "application\/xml" is not accepted here \(use application\/json\)$/, 'the 415 names the type sent');
  assertError(await call({ method: 'POST', url: '/v1/collections/missing/related', payload: { text } }), 404, 'SCDV_COLLECTION_NOT_FOUND');
});

test('similarity: dot product of the normalised vectors, by id or text', async () => {
  const self = await call({ method: 'POST', url: '/v1/similarity', payload: { a: { id: DOC }, b: { id: DOC } } });
  // Stored values are 12-bit codes x a power-of-two unit (pipeline/store/README.md, "Stored values"): a score
  // moves by at most unit * sum |q_i| (measured under 2e-4 on real vectors), so a stored unit vector's squared
  // norm is within 1e-3 of 1.
  assert.ok(Math.abs(self.body.similarity - 1) < 1e-3, String(self.body.similarity));
  const other = h.sampleDocs()[120].id;
  const ab = await call({ method: 'POST', url: '/v1/similarity', payload: { a: { id: DOC }, b: { id: other, collection: 'articles' } } });
  const ba = await call({ method: 'POST', url: '/v1/similarity', payload: { a: { id: other }, b: { id: DOC } } });
  assert.ok(Math.abs(ab.body.similarity - ba.body.similarity) < 1e-9);
  assert.ok(ab.body.similarity < 1);
  // The related score of `other` for DOC is the same dot product (without feedback: with it, scores are to the expanded query).
  const rel = await call(`/v1/collections/articles/documents/${DOC}/related?k=306&feedback=false`);
  const hit = rel.body.results.find((/** @type {any} */ x) => x.id === other);
  assert.ok(Math.abs(hit.score - ab.body.similarity) < 1e-5);
  const text = await call({ method: 'POST', url: '/v1/similarity', payload: { a: { text: 'サッカーの試合' }, b: { id: DOC } } });
  assert.equal(text.status, 200);
  assert.ok(text.body.similarity > -1 && text.body.similarity <= 1);
  const both = await call({ method: 'POST', url: '/v1/similarity', payload: { a: { id: DOC, text: 'x' }, b: { id: DOC } } });
  assertError(both, 400, 'SCDV_REQUEST_INVALID');
  assert.equal(both.body.details.field, 'body.a');
  assertError(await call({ method: 'POST', url: '/v1/similarity', payload: { a: { id: 'nope' }, b: { id: DOC } } }), 404, 'SCDV_DOCUMENT_NOT_FOUND');
  assertError(await call({ method: 'POST', url: '/v1/similarity', payload: { a: { text: '。。。' }, b: { id: DOC } } }), 422, 'SCDV_NO_USABLE_WORDS');
});

test('models: list, activate (every process follows the file), rollback, refusals', async () => {
  const list = await call('/v1/models');
  assert.equal(list.body.active, h.MODEL_A);
  assert.deepEqual(list.body.models.map((/** @type {any} */ m) => m.name).sort(), [h.MODEL_A, h.MODEL_B]);
  assertError(await call({ method: 'POST', url: `/v1/models/${h.MODEL_B}/activate` }), 401, 'SCDV_UNAUTHORIZED');
  assertError(await call({ method: 'POST', url: `/v1/models/${h.MODEL_B}/activate`, headers: { 'x-api-key': 'wrong' } }), 403, 'SCDV_FORBIDDEN');
  assertError(await call({ method: 'POST', url: '/v1/models/nope/activate', headers: KEY }), 404, 'SCDV_MODEL_NOT_FOUND');
  assertError(await call({ method: 'POST', url: '/v1/models/..%2Fx/activate', headers: KEY }), 400, 'SCDV_REQUEST_INVALID');

  const before = (await call(`/v1/collections/articles/documents/${DOC}/related?k=5`)).body;
  const act = await call({ method: 'POST', url: `/v1/models/${h.MODEL_B}/activate`, headers: KEY });
  assert.deepEqual(act.body, { active: h.MODEL_B, previous: h.MODEL_A, changed: true });
  const record = JSON.parse(fs.readFileSync(path.join(dataDir(), 'server', 'active-model.json'), 'utf8'));
  assert.equal(record.model, h.MODEL_B);
  assert.equal(record.previous, h.MODEL_A);
  const after = (await call(`/v1/collections/articles/documents/${DOC}/related?k=5`)).body;
  assert.equal(after.model, h.MODEL_B);
  assert.notDeepEqual(after.results.map((/** @type {any} */ x) => x.score), before.results.map((/** @type {any} */ x) => x.score), 'the other model answers');
  const models = (await call('/v1/models')).body;
  assert.equal(models.previous, h.MODEL_A);
  assert.ok(models.models.find((/** @type {any} */ m) => m.name === h.MODEL_A).loaded, 'the previous model stays loaded for rollback');
  // A model's width is the width of its vectors whether it is loaded or not (not its SCDV block alone).
  const widthOf = (/** @type {any} */ body, /** @type {string} */ name) => body.models.find((/** @type {any} */ m) => m.name === name);
  assert.equal(widthOf(list.body, h.MODEL_B).loaded, false);
  assert.equal(widthOf(list.body, h.MODEL_B).width, widthOf(models, h.MODEL_B).width, 'unloaded and loaded: one width');
  assert.equal(widthOf(models, h.MODEL_B).width, widthOf(models, h.MODEL_B).collections.find((/** @type {any} */ c) => c.name === 'articles').width);

  // Two activations at once: the second is refused while the first loads its model.
  const [first, second] = await Promise.all([
    call({ method: 'POST', url: `/v1/models/${h.MODEL_A}/activate`, headers: KEY }),
    call({ method: 'POST', url: `/v1/models/${h.MODEL_A}/activate`, headers: KEY }),
  ]);
  assert.equal(first.status, 200);
  assertError(second, 409, 'SCDV_MODEL_CHANGING');
  const back = await call({ method: 'POST', url: `/v1/models/${h.MODEL_A}/activate`, headers: KEY });
  assert.equal(back.body.active, h.MODEL_A);
  assert.equal(back.body.changed, false, 'activating the active model changes nothing');
  assert.deepEqual(first.body, { active: h.MODEL_A, previous: h.MODEL_B, changed: true });
  assert.deepEqual((await call(`/v1/collections/articles/documents/${DOC}/related?k=5`)).body, before);

  // A collection only model A has: switching to B would answer 404s for it, so it is refused.
  const put = await call({ method: 'PUT', url: '/v1/collections/only-a/documents/x1', headers: KEY, payload: { body: 'サッカーの試合と選手' } });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const refused = await call({ method: 'POST', url: `/v1/models/${h.MODEL_B}/activate`, headers: KEY });
  assertError(refused, 409, 'SCDV_MODEL_NOT_BUILT');
  assert.match(refused.body.message, /only-a/);
  assert.equal((await call('/v1/models')).body.active, h.MODEL_A);
});

test('PUT and DELETE: keys, visible at once (the result cache follows), validation', async () => {
  const src = (await call(`/v1/collections/articles/documents/${DOC}`)).body;
  const body = h.sampleDocs().find((d) => d.id === DOC)?.body ?? '';
  const before = await call(`/v1/collections/articles/documents/${DOC}/related?k=20`);
  const url = '/v1/collections/articles/documents/copy-1';
  const payload = { title: src.title, body, url: 'https://example.com/copy-1', category: 'sports-watch', site: 'example', published_at: '2012-05-01T09:00:00+09:00' };
  assertError(await call({ method: 'PUT', url, payload }), 401, 'SCDV_UNAUTHORIZED');
  assertError(await call({ method: 'PUT', url, payload, headers: { authorization: 'Bearer nope' } }), 403, 'SCDV_FORBIDDEN');
  const put = await call({ method: 'PUT', url, payload, headers: { 'x-api-key': h.API_KEY } });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.equal(put.body.model, h.MODEL_A);
  const meta = (await call(url)).body;
  assert.equal(meta.published_at, '2012-05-01T00:00:00.000Z');
  assert.equal(meta.site, 'example');
  const rel = await call(`/v1/collections/articles/documents/${DOC}/related?k=20`);
  assert.notDeepEqual(rel.body, before.body);
  h.assertCopyCollapsed(rel.body, 'copy-1'); // visible at once: collapsed as a copy of the query document
  h.assertCopyOnTop((await call(`/v1/collections/articles/documents/${DOC}/related?k=20&collapse=false&feedback=false`)).body.results, 'copy-1');

  const badDate = await call({ method: 'PUT', url, payload: { ...payload, published_at: 'someday' }, headers: KEY });
  assertError(badDate, 400, 'SCDV_REQUEST_INVALID');
  assert.equal(badDate.body.details.field, 'body.published_at');
  assertError(await call({ method: 'PUT', url, payload: { title: 'x' }, headers: KEY }), 400, 'SCDV_REQUEST_INVALID');
  assertError(await call({ method: 'PUT', url, payload: { body: '。。。！！' }, headers: KEY }), 422, 'SCDV_NO_USABLE_WORDS');

  assertError(await call({ method: 'DELETE', url }), 401, 'SCDV_UNAUTHORIZED');
  const del = await call({ method: 'DELETE', url, headers: KEY });
  assert.deepEqual(del.body, { id: 'copy-1', collection: 'articles', model: h.MODEL_A, deleted: true });
  assertError(await call(url), 404, 'SCDV_DOCUMENT_NOT_FOUND');
  assert.deepEqual((await call(`/v1/collections/articles/documents/${DOC}/related?k=20`)).body, before.body);
  assertError(await call({ method: 'DELETE', url, headers: KEY }), 404, 'SCDV_DOCUMENT_NOT_FOUND');
});

test('bulk: JSON Lines body or an allowed file -> Bull index jobs; progress, errors; refusals', async () => {
  const docs = h.sampleDocs().slice(0, 40);
  const lines = docs.map((d) => JSON.stringify({ ...d, id: `bulk-${d.id}` }));
  lines.splice(5, 0, '{"id": "broken"', JSON.stringify({ id: 'no-body' }));
  // A repeated id: the first occurrence is kept (shards run in parallel; without this the last writer would win).
  lines.push(JSON.stringify({ ...docs[1], id: `bulk-${docs[0].id}`, title: 'second copy' }));
  const bulkUrl = '/v1/collections/fresh/documents:bulk';
  assertError(await call({ method: 'POST', url: bulkUrl, payload: lines.join('\n'), headers: { 'content-type': 'application/x-ndjson' } }), 401, 'SCDV_UNAUTHORIZED');
  const r = await call({ method: 'POST', url: bulkUrl, payload: lines.join('\n') + '\n', headers: { ...KEY, 'content-type': 'application/x-ndjson' } });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  assert.equal(r.body.lines, 43);
  assert.equal(r.body.status_url, `/v1/jobs/${r.body.job}`);
  /** @type {any} */
  let status;
  await waitFor(async () => {
    status = (await call({ url: r.body.status_url, headers: KEY })).body;
    return status.state === 'completed' || status.state === 'failed';
  }, { timeoutMs: 90_000, everyMs: 100, what: 'the bulk job to end', last: () => status });
  assert.equal(status.state, 'completed', JSON.stringify(status));
  assert.equal(status.documents, 40);
  assert.equal(status.rejected, 3);
  assert.equal(status.progress, 1);
  assert.deepEqual(status.issues.map((/** @type {any} */ x) => [x.line, x.code]), [[6, 'INVALID_JSON'], [7, 'MISSING_FIELD'], [43, 'DUPLICATE_ID']]);
  assert.equal((await call(`/v1/collections/fresh/documents/bulk-${docs[0].id}`)).body.title, docs[0].title);
  // The worker process wrote to the store; this process sees it.
  assert.equal((await call('/v1/collections')).body.collections.find((/** @type {any} */ c) => c.name === 'fresh').count, 40);
  assert.equal((await call(`/v1/collections/fresh/documents/bulk-${docs[0].id}`)).status, 200);

  // A file path: only inside dataDir()/imports (or server.bulkFileRoots).
  const imports = path.join(dataDir(), 'imports');
  fs.mkdirSync(imports, { recursive: true });
  const relatedUrl = `/v1/collections/fresh/documents/bulk-${docs[0].id}/related?k=20`;
  const cached = (await call(relatedUrl)).body;
  assert.ok(!cached.results.some((/** @type {any} */ x) => x.id === 'bulk-copy'));
  fs.writeFileSync(path.join(imports, 'more.jsonl'), JSON.stringify({ ...docs[0], id: 'bulk-copy' }) + '\n');
  const byPath = await call({ method: 'POST', url: bulkUrl, payload: { path: path.join(imports, 'more.jsonl') }, headers: KEY });
  assert.equal(byPath.status, 202, JSON.stringify(byPath.body));
  /** @type {any} */
  let byPathStatus;
  await waitFor(async () => {
    byPathStatus = (await call(byPath.body.status_url)).body;
    return byPathStatus.state === 'completed' || byPathStatus.state === 'failed';
  }, { timeoutMs: 90_000, everyMs: 100, what: 'the bulk job of a file to end', last: () => byPathStatus });
  assert.equal(byPathStatus.state, 'completed', JSON.stringify(byPathStatus));
  // Written by the worker process: this process sees it within the store's refresh, and the cached answer goes.
  /** @type {any} */
  let related;
  await waitFor(async () => {
    related = (await call(relatedUrl)).body;
    return related.dropped?.some((/** @type {any} */ x) => x.id === 'bulk-copy');
  }, { timeoutMs: 20_000, everyMs: 50, what: 'the related list to show the document written by the worker', last: () => related });
  h.assertCopyCollapsed(related, 'bulk-copy');
  h.assertCopyOnTop((await call(`${relatedUrl}&collapse=false&feedback=false`)).body.results, 'bulk-copy');
  assertError(await call({ method: 'POST', url: bulkUrl, payload: { path: '/etc/passwd' }, headers: KEY }), 422, 'SCDV_BULK_SOURCE_INVALID');
  fs.symlinkSync('/etc/hostname', path.join(imports, 'link.jsonl'));
  assertError(await call({ method: 'POST', url: bulkUrl, payload: { path: path.join(imports, 'link.jsonl') }, headers: KEY }), 422, 'SCDV_BULK_SOURCE_INVALID');
  assertError(await call({ method: 'POST', url: bulkUrl, payload: { path: path.join(imports, '../../../x') }, headers: KEY }), 422, 'SCDV_BULK_SOURCE_INVALID');
  assertError(await call({ method: 'POST', url: bulkUrl, payload: 'a b c', headers: { ...KEY, 'content-type': 'text/plain' } }), 415, 'SCDV_MEDIA_TYPE_UNSUPPORTED');
  assertError(await call({ method: 'POST', url: bulkUrl, payload: '', headers: { ...KEY, 'content-type': 'application/x-ndjson' } }), 422, 'SCDV_BULK_SOURCE_INVALID');
  const big = Array.from({ length: 200 }, (_, i) => JSON.stringify({ id: `big-${i}`, body: 'あ'.repeat(1000) })).join('\n');
  assertError(await call({ method: 'POST', url: bulkUrl, payload: big, headers: { ...KEY, 'content-type': 'application/x-ndjson' } }), 413, 'SCDV_BODY_TOO_LARGE');
  assertError(await call({ method: 'POST', url: '/v1/collections/Bad/documents:bulk', payload: { path: '/x' }, headers: KEY }), 400, 'SCDV_REQUEST_INVALID');
  assertError(await call('/v1/jobs/bulk-00000000-0000-0000-0000-000000000000'), 404, 'SCDV_JOB_NOT_FOUND');
  assertError(await call('/v1/jobs/..%2F..%2Fetc'), 404, 'SCDV_JOB_NOT_FOUND');
});

test('match: live, then precomputed in Redis under the documented keys; stale entries fall back to live', async () => {
  const url = `/v1/match?collection=ads&for=${DOC}&k=3`;
  const live = await call(url);
  assert.equal(live.status, 200, JSON.stringify(live.body));
  assert.equal(live.body.served_from, 'live');
  assert.equal(live.body.results.length, 3);
  assert.ok(live.body.results.every((/** @type {any} */ x) => x.id.startsWith('ad-')));

  const cfg = h.testConfig();
  const pc = await runPrecompute({ model: h.MODEL_A, source: 'articles', target: 'ads', k: 4, redisUrl, config: cfg, processor: localPrecompute });
  assert.equal(pc.written, 306);
  const pre = await call(url);
  assert.equal(pre.body.served_from, 'precomputed');
  assert.deepEqual(pre.body.results, live.body.results);
  // The documented key layout, read as an ad server would.
  const { Redis } = await import('ioredis');
  const { redisOptions } = await import('../../pipeline/queue/redis.js');
  const r = new Redis(redisOptions(redisUrl));
  try {
    const k = keys(cfg.queue.prefix);
    const raw = await r.get(k.entry(h.MODEL_A, 'articles', 'ads', DOC));
    assert.ok(raw, `${k.entry(h.MODEL_A, 'articles', 'ads', DOC)} exists`);
    assert.match(/** @type {string} */ (raw), /[^\x00-\x7f]/, 'stored as UTF-8 JSON (the titles as written)');
    assert.doesNotMatch(/** @type {string} */ (raw), /\\u[0-9a-f]{4}/);
    const entry = JSON.parse(/** @type {string} */ (raw));
    assert.equal(entry.k, 4);
    assert.equal(entry.count, 4);
    assert.equal(entry.results[0].title, (await call(`/v1/collections/ads/documents/${entry.results[0].id}`)).body.title);
    assert.equal(entry.results.length, 4);
    const ttl = await r.ttl(k.entry(h.MODEL_A, 'articles', 'ads', DOC));
    assert.ok(ttl > 0 && ttl <= cfg.server.precompute.ttlSeconds);
    assert.deepEqual(await r.smembers(k.targets(h.MODEL_A, 'articles')), ['ads']);
    assert.equal(k.entry('m', 's', 't', 'i'), '{scdv}:match:m:s:t:i');
  } finally {
    r.disconnect();
  }
  // k covering the entry: the stored results are passed through as they are.
  const all = await call(`/v1/match?collection=ads&for=${DOC}&k=4`);
  assert.equal(all.body.served_from, 'precomputed');
  assert.deepEqual(all.body.results.slice(0, 3), live.body.results);
  assert.match(all.body.results[0].title, /[^\x00-\x7f]/, 'titles come back as they were written');
  const rawAll = await srv.app.inject(`/v1/match?collection=ads&for=${DOC}&k=4`);
  assert.doesNotMatch(rawAll.body, /\\u[0-9a-f]{4}/, 'a precomputed answer is UTF-8 like a live one, not \\u escapes');
  assert.ok(rawAll.body.includes(all.body.results[0].title));
  const min = await call(`${url}&min_score=${pre.body.results[1].score}`);
  assert.equal(min.body.served_from, 'precomputed');
  assert.equal(min.body.results.length, 2);
  assert.equal((await call(`/v1/match?collection=ads&for=${DOC}&k=5`)).body.served_from, 'live', 'more than precomputed: live');

  // Writing a target document makes every entry for that target stale.
  const put = await call({ method: 'PUT', url: '/v1/collections/ads/documents/ad-new', headers: KEY, payload: { title: 'サッカー', body: 'サッカー日本代表の試合とプロ野球のチケット' } });
  assert.equal(put.status, 200);
  assert.equal((await call(url)).body.served_from, 'live');

  const post = await call({ method: 'POST', url: '/v1/match', payload: { collection: 'ads', text: 'スマートフォンの新機種とアプリ', k: 2 } });
  assert.equal(post.status, 200);
  assert.equal(post.body.results.length, 2);
  assertError(await call('/v1/match?collection=ads&for=nope'), 404, 'SCDV_DOCUMENT_NOT_FOUND');
  assertError(await call(`/v1/match?collection=missing&for=${DOC}`), 404, 'SCDV_COLLECTION_NOT_FOUND');
  assertError(await call(`/v1/match?collection=ads&source=missing&for=${DOC}`), 404, 'SCDV_COLLECTION_NOT_FOUND');
  const noColl = await call(`/v1/match?for=${DOC}`);
  assertError(noColl, 400, 'SCDV_REQUEST_INVALID');
  assert.equal(noColl.body.details.field, 'querystring.collection');
  assertError(await call({ method: 'POST', url: '/v1/match', payload: { collection: 'ads', text: '。' } }), 422, 'SCDV_NO_USABLE_WORDS');
});

test('scdv worker precompute processes batches queued on precompute by another process', { timeout: 60_000 }, async () => {
  const { spawn } = await import('node:child_process');
  const { openQueue, closeWorkerQueue } = await import('../../pipeline/queue/queues.js');
  const { REPO_ROOT } = await import('../../pipeline/paths.js');
  const cfg = h.testConfig();
  const worker = spawn(process.execPath, [path.join(REPO_ROOT, 'pipeline', 'cli.js'), 'worker', 'precompute'], {
    env: { ...process.env, REDIS_URL: redisUrl }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  worker.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((resolve) => worker.once('exit', (code) => resolve(code)));
  const queue = openQueue('precompute', redisUrl, cfg.queue);
  try {
    /** @type {import('../../pipeline/match/index.js').PrecomputeJob} */
    const data = {
      run: 'worker-test', model: h.MODEL_A, source: 'ads', target: 'articles', k: 2, ids: ['ad-phone', 'no-such-ad'],
      ttlSeconds: 60, prefix: cfg.queue.prefix, mode: 'fast',
    };
    const job = await queue.add('batch', data, { jobId: 'worker-test-0' });
    assert.deepEqual(await job.finished(), { written: 1, missing: 1 }, err);
    const raw = await /** @type {any} */ (queue).client.get(keys(cfg.queue.prefix).entry(h.MODEL_A, 'ads', 'articles', 'ad-phone'));
    assert.equal(JSON.parse(raw).count, 2);
  } finally {
    await closeWorkerQueue(queue);
    worker.kill('SIGTERM');
  }
  assert.equal(await exited, 0, err);
});

test('metrics, OpenAPI document, Bull Board behind the key, unknown routes', async () => {
  const m = await call('/metrics');
  assert.equal(m.status, 200);
  assert.match(String(m.headers['content-type']), /^text\/plain/);
  assert.match(m.body, /scdv_http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/v1\/collections\/:collection\/documents\/:id\/related",status="200"\}/);
  // the bulk route as it is served (Fastify writes its literal colon '::')
  assert.match(m.body, /route="\/v1\/collections\/:collection\/documents:bulk"/);
  assert.doesNotMatch(m.body, /documents::bulk/);
  assert.match(m.body, /scdv_store_documents\{model="srv-a",collection="articles"\} 306/);
  assert.match(m.body, /scdv_queue_jobs\{queue="index",state="waiting"\} \d+/);
  assert.match(m.body, /scdv_embed_seconds_count \d+/);
  assert.match(m.body, /scdv_model_active\{model="srv-a"\} 1/);
  assert.match(m.body, /scdv_match_lookups_total\{served_from="precomputed"\} \d+/);

  const doc = (await call('/docs/json')).body;
  assert.equal(doc.openapi, '3.0.3');
  const paths = Object.keys(doc.paths);
  for (const p of ['/v1/collections/{collection}/documents/{id}/related', '/v1/collections/{collection}/related', '/v1/similarity',
    '/v1/collections/{collection}/documents/{id}', '/v1/collections', '/v1/collections/{collection}/documents:bulk', '/v1/jobs/{id}',
    '/v1/models', '/v1/models/{name}/activate', '/v1/match', '/healthz', '/readyz', '/metrics']) {
    assert.ok(paths.includes(p), p);
  }
  assert.ok(!paths.some((p) => p.startsWith('/admin') || p.startsWith('/docs')));
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(/** @type {Record<string, any>} */ (ops))) {
      assert.ok(op.responses['200'] || op.responses['202'], `${method} ${p} documents its answer`);
    }
  }
  assert.deepEqual(doc.paths['/v1/collections/{collection}/documents/{id}'].put.security, [{ bearer: [] }, { apiKey: [] }]);
  assert.equal((await call('/docs')).status, 200);

  assertError(await call('/admin/queues'), 401, 'SCDV_UNAUTHORIZED');
  assertError(await call({ url: '/admin/queues', headers: { 'x-api-key': 'nope' } }), 403, 'SCDV_FORBIDDEN');
  const board = await call({ url: '/admin/queues', headers: KEY });
  assert.equal(board.status, 200);
  assert.match(board.body, /<title>scdv queues<\/title>/);
  const api = await call({ url: '/admin/queues/api/queues?activeQueue=embed', headers: KEY });
  assert.equal(api.status, 200);
  assert.deepEqual(api.body.queues.map((/** @type {any} */ q) => q.name).sort(), [...QUEUE_NAMES].sort(), 'every pipeline queue');
  assertError(await call('/v1/nothing'), 404, 'SCDV_ROUTE_NOT_FOUND');
});

test('Redis down: reads keep serving (match searches live), queue routes answer 503', async () => {
  const own = await startPrivateRedis();
  const s2 = await startServer({ config: h.testConfig(), redisUrl: own.url, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    await runPrecompute({ model: h.MODEL_A, source: 'articles', target: 'ads', k: 3, redisUrl: own.url, config: h.testConfig(), processor: localPrecompute });
    assert.equal((await s2.app.inject(`/v1/match?collection=ads&for=${DOC}&k=3`)).json().served_from, 'precomputed');
    await own.stop();
    await waitFor(() => !s2.ctx.hub?.up, { timeoutMs: 20_000, what: 'the server to notice that its Redis stopped' });
    const ready = await s2.app.inject('/readyz');
    assert.equal(ready.statusCode, 200);
    assert.equal(ready.json().redis, 'down');
    const m = await s2.app.inject(`/v1/match?collection=ads&for=${DOC}&k=3`);
    assert.equal(m.statusCode, 200);
    assert.equal(m.json().served_from, 'live');
    assert.equal((await s2.app.inject(`/v1/collections/articles/documents/${DOC}/related?k=3`)).statusCode, 200);
    const put = await s2.app.inject({ method: 'PUT', url: '/v1/collections/articles/documents/while-down', headers: KEY, payload: { body: 'サッカーの試合' } });
    assert.equal(put.statusCode, 200, 'a single write does not need the queue');
    const bulk = await s2.app.inject({ method: 'POST', url: '/v1/collections/articles/documents:bulk', headers: { ...KEY, 'content-type': 'application/x-ndjson' }, payload: '{"id":"a","body":"b"}\n' });
    assert.equal(bulk.statusCode, 503);
    assert.equal(bulk.json().error, 'SCDV_QUEUE_UNAVAILABLE');
    assert.doesNotMatch(bulk.body, /redis:\/\/|unix:\/\/|sock/);
    s2.ctx.status.shuttingDown = true;
    const closing = await s2.app.inject('/readyz');
    assert.equal(closing.statusCode, 503, 'not ready while shutting down');
    assert.equal(closing.json().status, 'not_ready');
  } finally {
    await s2.close();
    await own.stop();
  }
});

test('closed reads, CORS, and no key in the logs', async () => {
  /** @type {string[]} */
  const logs = [];
  const stream = new Writable({ write(chunk, _enc, cb) { logs.push(chunk.toString()); cb(); } });
  const s3 = await startServer({
    config: h.testConfig({ openReads: false, corsOrigins: ['https://news.example.com'] }), redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0,
    logger: { level: 'debug', stream },
  });
  try {
    assert.equal((await s3.app.inject('/healthz')).statusCode, 200, 'health checks stay open');
    assert.equal((await s3.app.inject(`/v1/collections/articles/documents/${DOC}`)).statusCode, 401);
    assert.equal((await s3.app.inject({ url: `/v1/collections/articles/documents/${DOC}`, headers: { 'x-api-key': 'secret-wrong-key' } })).statusCode, 403);
    assert.equal((await s3.app.inject({ url: `/v1/collections/articles/documents/${DOC}`, headers: KEY })).statusCode, 200);
    const pre = await s3.app.inject({
      method: 'OPTIONS', url: '/v1/collections/articles/related',
      headers: { origin: 'https://news.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    assert.equal(pre.headers['access-control-allow-origin'], 'https://news.example.com');
    const other = await s3.app.inject({ url: '/healthz', headers: { origin: 'https://evil.example.org' } });
    assert.equal(other.headers['access-control-allow-origin'], undefined);
    const all = logs.join('');
    assert.ok(all.includes('incoming request'), 'debug logs were written');
    assert.ok(!all.includes(h.API_KEY) && !all.includes('secret-wrong-key'), 'keys never reach the logs');
  } finally {
    await s3.close();
  }
});
