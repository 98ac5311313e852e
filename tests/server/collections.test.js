// Collections through the API and the CLI: reads and refused writes create nothing; DELETE
// /v1/collections/:collection and `scdv collection delete` remove one everywhere (store, listing, caches,
// precomputed matches, indexed.json); empty collections do not block a model's activation.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

const h = await import('./helpers.js');
const { waitFor } = await import('../lib/wait.js');
const { startServer } = await import('../../server/start.js');
const { runPrecompute } = await import('../../pipeline/stages/precompute.js');
const { localPrecompute } = await import('../../workers/precompute.js');
const { storeDirFor } = await import('../../pipeline/paths.js');
const { openStore } = await import('../../pipeline/store/index.js');
const { recordIndexed, readIndexed } = await import('../../pipeline/serving/index.js');
const { vectorLayout } = await import('../../pipeline/embed/layout.js');
const { REPO_ROOT } = await import('../../pipeline/paths.js');

/** @type {import('../../server/start.js').RunningServer} */
let srv;
/** @type {string} */
let redisUrl;
const KEY = { authorization: `Bearer ${h.API_KEY}` };
const DOC = 'sports-watch-4597641';
const storeA = () => storeDirFor(h.MODEL_A);
/** Folders of model A's store. */
const folders = () => fs.readdirSync(storeA()).sort();

before(async () => {
  ({ redis: { url: redisUrl } } = await h.setup());
  srv = await startServer({ config: h.testConfig(), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 1 });
});
after(async () => {
  await srv?.close();
  await h.teardown();
});

/** @param {import('light-my-request').InjectOptions | string} opts */
const call = (opts) => h.inject(srv.app, opts);

/** @param {{status: number, body: any}} r @param {number} status @param {string} code */
function assertError(r, status, code) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.error, code);
}

const listed = async () => (await call('/v1/collections')).body.collections.map((/** @type {any} */ c) => c.name);

/** @param {string} collection @param {string} id */
const put = (collection, id) => call({ method: 'PUT', url: `/v1/collections/${collection}/documents/${id}`, headers: KEY, payload: { body: 'サッカーの試合と選手、監督と観戦' } });

test('reads and document deletes of a collection that does not exist answer 404 and create nothing', async () => {
  const before = folders();
  for (let i = 0; i < 10; i++) {
    const c = `litter-${i}`;
    assertError(await call(`/v1/collections/${c}/documents/x`), 404, 'SCDV_COLLECTION_NOT_FOUND');
    assertError(await call(`/v1/collections/${c}/documents/x/related`), 404, 'SCDV_COLLECTION_NOT_FOUND');
    assertError(await call({ method: 'POST', url: `/v1/collections/${c}/related`, payload: { text: 'サッカーの試合' } }), 404, 'SCDV_COLLECTION_NOT_FOUND');
    assertError(await call(`/v1/match?collection=${c}&for=${DOC}`), 404, 'SCDV_COLLECTION_NOT_FOUND');
    assertError(await call(`/v1/match?collection=ads&source=${c}&for=${DOC}`), 404, 'SCDV_COLLECTION_NOT_FOUND');
    assertError(await call({ method: 'POST', url: '/v1/match', payload: { collection: c, text: 'サッカーの試合' } }), 404, 'SCDV_COLLECTION_NOT_FOUND');
    assertError(await call({ method: 'DELETE', url: `/v1/collections/${c}/documents/x`, headers: KEY }), 404, 'SCDV_COLLECTION_NOT_FOUND');
  }
  assert.deepEqual(folders(), before, 'no folder appeared in the store');
});

test('a refused write creates no collection: PUT answered 422, a bulk job without a valid line', async () => {
  const before = folders();
  assertError(await call({ method: 'PUT', url: '/v1/collections/refused/documents/a', headers: KEY, payload: { body: '0' } }), 422, 'SCDV_NO_USABLE_WORDS');
  assert.ok(!(await listed()).includes('refused'));
  assertError(await call('/v1/collections/refused/documents/a'), 404, 'SCDV_COLLECTION_NOT_FOUND');

  const lines = ['{"id": "broken"', JSON.stringify({ id: 'no-body' }), JSON.stringify({ id: 'unknown', body: 'Wqplkz zzvtq xqvvz.' })];
  const r = await call({ method: 'POST', url: '/v1/collections/refused-bulk/documents:bulk', payload: lines.join('\n') + '\n', headers: { ...KEY, 'content-type': 'application/x-ndjson' } });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  /** @type {any} */
  let status;
  await waitFor(async () => {
    status = (await call(r.body.status_url)).body;
    return status.state === 'completed' || status.state === 'failed';
  }, { timeoutMs: 90_000, everyMs: 100, what: 'the bulk job to end', last: () => status });
  assert.equal(status.documents, 0, JSON.stringify(status));
  assert.ok(!(await listed()).includes('refused-bulk'));
  assert.deepEqual(folders(), before, 'no folder appeared in the store');
});

test('DELETE /v1/collections/:collection: the key, 404, then gone from the listing, the disk, caches, precomputed matches and indexed.json', async () => {
  const url = '/v1/collections/doomed';
  assertError(await call({ method: 'DELETE', url }), 401, 'SCDV_UNAUTHORIZED');
  assertError(await call({ method: 'DELETE', url, headers: { authorization: 'Bearer nope' } }), 403, 'SCDV_FORBIDDEN');
  assertError(await call({ method: 'DELETE', url, headers: KEY }), 404, 'SCDV_COLLECTION_NOT_FOUND');
  assertError(await call({ method: 'DELETE', url: '/v1/collections/Bad..', headers: KEY }), 400, 'SCDV_REQUEST_INVALID');

  for (const id of ['d1', 'd2', 'd3']) assert.equal((await put('doomed', id)).status, 200);
  assert.ok((await listed()).includes('doomed'));
  const layout = readIndexed(h.MODEL_A).articles?.layout ?? vectorLayout(h.testConfig().embed, 144, 1);
  recordIndexed(h.MODEL_A, 'doomed', layout);
  // A cached related answer, and precomputed matches with the collection as target and as source.
  const related = await call('/v1/collections/doomed/documents/d1/related?k=2');
  assert.equal(related.status, 200);
  await runPrecompute({ model: h.MODEL_A, source: 'articles', target: 'doomed', k: 2, redisUrl, config: h.testConfig(), processor: localPrecompute });
  await runPrecompute({ model: h.MODEL_A, source: 'doomed', target: 'ads', k: 2, redisUrl, config: h.testConfig(), processor: localPrecompute });
  assert.equal((await call(`/v1/match?collection=doomed&for=${DOC}&k=2`)).body.served_from, 'precomputed');
  assert.equal((await call('/v1/match?collection=ads&source=doomed&for=d1&k=2')).body.served_from, 'precomputed');

  const del = await call({ method: 'DELETE', url, headers: KEY });
  assert.equal(del.status, 200, JSON.stringify(del.body));
  assert.deepEqual(del.body, { collection: 'doomed', model: h.MODEL_A, deleted: true });
  assert.ok(!(await listed()).includes('doomed'));
  assert.ok(!fs.existsSync(path.join(storeA(), 'doomed')));
  assert.ok(!('doomed' in readIndexed(h.MODEL_A)));
  assertError(await call('/v1/collections/doomed/documents/d1'), 404, 'SCDV_COLLECTION_NOT_FOUND');
  assertError(await call('/v1/collections/doomed/documents/d1/related?k=2'), 404, 'SCDV_COLLECTION_NOT_FOUND');
  assertError(await call(`/v1/match?collection=doomed&for=${DOC}&k=2`), 404, 'SCDV_COLLECTION_NOT_FOUND');
  assertError(await call({ method: 'DELETE', url, headers: KEY }), 404, 'SCDV_COLLECTION_NOT_FOUND');

  // Created again under the same name, by the same sequence of writes (so its change counter may well equal
  // the old one's) but other texts: a new collection; nothing of the old one is served.
  const texts = { d1: '映画の監督と俳優、劇場公開の話題作', d2: 'スマートフォンの新機種とアプリ', d3: 'パソコンとソフトウェアのセキュリティ' };
  for (const [id, body] of Object.entries(texts)) {
    assert.equal((await call({ method: 'PUT', url: `/v1/collections/doomed/documents/${id}`, headers: KEY, payload: { body } })).status, 200);
  }
  const relatedAgain = await call('/v1/collections/doomed/documents/d1/related?k=2');
  assert.equal(relatedAgain.status, 200);
  assert.notDeepEqual(relatedAgain.body.results.map((/** @type {any} */ r) => r.score), related.body.results.map((/** @type {any} */ r) => r.score), 'not the old cached answer');
  assert.notEqual((await call(`/v1/match?collection=doomed&for=${DOC}&k=2`)).body.served_from, 'precomputed');
  assert.notEqual((await call('/v1/match?collection=ads&source=doomed&for=d1&k=2')).body.served_from, 'precomputed');
  assert.equal((await call({ method: 'DELETE', url, headers: KEY })).status, 200);
});

test('scdv collection list / delete: removes a collection a running server has open', async () => {
  /** @param {string[]} args */
  const scdv = (args) => spawnSync(process.execPath, [path.join(REPO_ROOT, 'pipeline', 'cli.js'), ...args], { env: { ...process.env, REDIS_URL: redisUrl }, encoding: 'utf8' });
  assert.equal((await put('cli-doomed', 'c1')).status, 200);
  assert.equal((await call('/v1/collections/cli-doomed/documents/c1')).status, 200);
  const list = scdv(['collection', 'list', '--model', h.MODEL_A, '--json']);
  assert.equal(list.status, 0, list.stderr);
  assert.ok(JSON.parse(list.stdout).collections.some((/** @type {any} */ c) => c.name === 'cli-doomed' && c.count === 1));
  // the table says which model it lists: the active one without --model
  const table = scdv(['collection', 'list']);
  assert.equal(table.status, 0, table.stderr);
  assert.match(table.stderr, new RegExp(`^collections of model ${h.MODEL_A} \\(the active one; --model NAME lists another\\):$`, 'm'));
  assert.match(table.stdout, /^cli-doomed\t1 documents\twidth \d+$/m);

  const del = scdv(['collection', 'delete', 'cli-doomed', '--model', h.MODEL_A]);
  assert.equal(del.status, 0, del.stderr);
  assert.match(del.stderr, /deleted collection "cli-doomed"/);
  assert.ok(!fs.existsSync(path.join(storeA(), 'cli-doomed')));
  assertError(await call('/v1/collections/cli-doomed/documents/c1'), 404, 'SCDV_COLLECTION_NOT_FOUND');
  assert.ok(!(await listed()).includes('cli-doomed'));

  const again = scdv(['collection', 'delete', 'cli-doomed', '--model', h.MODEL_A]);
  assert.equal(again.status, 1);
  assert.match(again.stderr, /collection "cli-doomed" not found/);
  const usage = scdv(['collection', 'delete']);
  assert.equal(usage.status, 2);
});

test('deleting a collection cancels the bulk jobs writing to it (route and CLI): they end failed with the reason, waiting shards leave the queue', async () => {
  // A server of its own (its own Redis, no index workers): the jobs stay queued until the delete.
  const idle = await startServer({ config: h.testConfig(), model: h.MODEL_A, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  const bulk = async () => {
    assert.equal((await h.inject(idle.app, { method: 'PUT', url: '/v1/collections/doomed-bulk/documents/seed', headers: KEY, payload: { body: 'サッカーの試合と選手' } })).status, 200);
    const r = await h.inject(idle.app, {
      method: 'POST', url: '/v1/collections/doomed-bulk/documents:bulk', headers: { ...KEY, 'content-type': 'application/x-ndjson' },
      payload: '{"id":"b1","body":"野球の試合で監督が語った。"}\n{"id":"b2","body":"映画の試写会に招待された。"}\n',
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((await h.inject(idle.app, `/v1/jobs/${r.body.job}`)).body.state, 'queued');
    return /** @type {string} */ (r.body.job);
  };
  const upload = (/** @type {string} */ id) => path.join(process.env.SCDV_DATA_DIR ?? '', 'server', 'uploads', `${id}.jsonl`);
  try {
    const first = await bulk();
    assert.ok(fs.existsSync(upload(first)));
    assert.equal((await h.inject(idle.app, { method: 'DELETE', url: '/v1/collections/doomed-bulk', headers: KEY })).status, 200);
    const s1 = (await h.inject(idle.app, { url: `/v1/jobs/${first}`, headers: KEY })).body;
    assert.equal(s1.state, 'failed', JSON.stringify(s1));
    assert.match(s1.reason, /collection "doomed-bulk" of model srv-a was deleted \(DELETE/);
    assert.equal(await idle.ctx.hub?.queues.index.getJob(`${first}-0`), null, 'its waiting shard left the queue');
    assert.ok(!fs.existsSync(upload(first)), 'its upload is removed');

    const second = await bulk();
    const del = spawnSync(process.execPath, [path.join(REPO_ROOT, 'pipeline', 'cli.js'), 'collection', 'delete', 'doomed-bulk', '--model', h.MODEL_A], { encoding: 'utf8' });
    assert.equal(del.status, 0, del.stderr);
    const s2 = (await h.inject(idle.app, { url: `/v1/jobs/${second}`, headers: KEY })).body;
    assert.equal(s2.state, 'failed', JSON.stringify(s2));
    assert.match(s2.reason, /was deleted \(scdv collection delete\)/);
  } finally {
    await idle.close();
  }
});

test('an empty collection (left by older versions) does not block activating another model', async () => {
  const store = openStore(storeA());
  try {
    const c = store.collection('old-empty', { width: 144 });
    await c.upsert([{ id: 'x', vector: { indices: [1], values: [1] } }]);
    await c.delete(['x']);
  } finally {
    await store.close();
  }
  assert.ok((await listed()).includes('old-empty'), 'listed, with count 0');
  const act = await call({ method: 'POST', url: `/v1/models/${h.MODEL_B}/activate`, headers: KEY });
  assert.equal(act.status, 200, JSON.stringify(act.body));
  const back = await call({ method: 'POST', url: `/v1/models/${h.MODEL_A}/activate`, headers: KEY });
  assert.equal(back.status, 200, JSON.stringify(back.body));
});
