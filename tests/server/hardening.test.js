// What an outside probe found, server side: slow request bodies and connection floods are bounded;
// impossible dates and non-decimal numbers are refused naming the field; the OpenAPI document says what the
// server checks (date formats, exactly one of id/text, the collection-name pattern) and a wrong method is 405.
// The queue board cannot change queues, and a bulk job's status shows its details only to a key holder.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';

const h = await import('./helpers.js');
const { waitFor } = await import('../lib/wait.js');
const { startServer } = await import('../../server/start.js');
const { COLLECTION_NAME_RE } = await import('../../pipeline/store/names.js');

/** @type {string} */
let redisUrl;
const KEY = { authorization: `Bearer ${h.API_KEY}` };
const DOC = 'sports-watch-4597641';

before(async () => { ({ redis: { url: redisUrl } } = await h.setup()); });
after(async () => { await h.teardown(); });

/** @param {Record<string, any>} server */
const start = (server) => startServer({ config: h.testConfig(server), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });

/**
 * A raw client: connect, send `head`, then one byte of body every `everyMs`; resolves when the server closes
 * the connection (or at `giveUpMs`), with what the server sent and when.
 * @param {string} url @param {string} head @param {number} everyMs @param {number} giveUpMs
 * @returns {Promise<{data: string, closedAfterMs: number | null}>}
 */
function trickle(url, head, everyMs, giveUpMs) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const t0 = Date.now();
    let data = '';
    const sock = net.connect(Number(port), hostname, () => { if (head) sock.write(head); });
    const timer = everyMs > 0 ? setInterval(() => { if (sock.writable) sock.write('x'); }, everyMs) : null;
    const giveUp = setTimeout(() => finish(null), giveUpMs);
    sock.on('data', (b) => { data += b.toString(); });
    sock.on('error', () => {});
    sock.on('close', () => finish(Date.now() - t0));
    function finish(/** @type {number | null} */ after) {
      if (timer) clearInterval(timer);
      clearTimeout(giveUp);
      sock.destroy();
      resolve({ data, closedAfterMs: after });
    }
  });
}

test('a request body trickled a byte at a time gets 408 within requestTimeoutMs, several at once, without a key', async () => {
  const srv = await start({ requestTimeoutMs: 1500, headersTimeoutMs: 500 });
  try {
    const head = 'POST /v1/collections/articles/related HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"text":"';
    const slow = await Promise.all([1, 2, 3].map(() => trickle(srv.url, head, 200, 8000)));
    for (const r of slow) {
      assert.notEqual(r.closedAfterMs, null, 'the server must close a connection whose body never completes');
      assert.ok(/** @type {number} */ (r.closedAfterMs) < 4000, `closed after ${r.closedAfterMs} ms`);
      assert.match(r.data, /^HTTP\/1\.1 408 /);
      assert.equal(JSON.parse(r.data.slice(r.data.indexOf('\r\n\r\n') + 4)).error, 'SCDV_REQUEST_INVALID');
    }
    // Headers that never end: 408 too, after headersTimeoutMs.
    const headers = await trickle(srv.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n', 100, 8000);
    assert.ok(headers.closedAfterMs !== null && headers.closedAfterMs < 3000, `closed after ${headers.closedAfterMs} ms`);
    assert.match(headers.data, /^HTTP\/1\.1 408 /);
    // The server still answers.
    assert.equal((await fetch(`${srv.url}/healthz`)).status, 200);
  } finally {
    await srv.close();
  }
});

test('at server.maxConnections a new connection takes the place of the longest idle one; a silent one closes after idleTimeoutMs', async () => {
  const srv = await start({ maxConnections: 3, requestTimeoutMs: 10_000, headersTimeoutMs: 10_000, idleTimeoutMs: 700 });
  try {
    const { hostname, port } = new URL(srv.url);
    /** @type {boolean[]} */
    const closed = [];
    const open = [];
    for (const i of [0, 1, 2]) {
      open.push(await new Promise((resolve, reject) => {
        const s = net.connect(Number(port), hostname, () => resolve(s));
        s.on('error', () => {});
        s.on('close', () => { closed[i] = true; });
        s.once('error', reject);
      }));
      await new Promise((r) => setTimeout(r, 30));
    }
    const extra = await trickle(srv.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 0, 3000);
    assert.match(extra.data, /^HTTP\/1\.1 200 /, 'the fourth connection is answered');
    await waitFor(() => closed.some(Boolean), { timeoutMs: 10_000, what: 'an idle connection to be closed to make room', last: () => closed });
    assert.deepEqual([closed[0] ?? false, closed[1] ?? false, closed[2] ?? false], [true, false, false], 'the longest idle connection made room');
    for (const s of /** @type {net.Socket[]} */ (open)) s.destroy();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await fetch(`${srv.url}/healthz`)).status, 200);
    // Half a body, then silence: closed by the idle limit long before the 10 s request limit.
    const head = 'POST /v1/similarity HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":';
    const silent = await trickle(srv.url, head, 0, 8000);
    assert.ok(silent.closedAfterMs !== null && silent.closedAfterMs < 3000, `closed after ${silent.closedAfterMs} ms`);
  } finally {
    await srv.close();
  }
});

test('impossible dates, non-decimal numbers and ambiguous similarity sides are 400s naming the field', async () => {
  const srv = await start({});
  const call = async (/** @type {any} */ opts) => {
    const res = await srv.app.inject(opts);
    return { status: res.statusCode, body: res.json(), headers: res.headers };
  };
  const bad = (/** @type {any} */ r, /** @type {string} */ field) => {
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.error, 'SCDV_REQUEST_INVALID');
    assert.equal(r.body.details.field, field, JSON.stringify(r.body));
  };
  try {
    const related = `/v1/collections/articles/documents/${DOC}/related`;
    bad(await call(`${related}?since=2010-02-30`), 'querystring.since');
    bad(await call(`${related}?until=2010-13-01`), 'querystring.until');
    bad(await call(`${related}?since=`), 'querystring.since');
    bad(await call(`${related}?since=2010-02-01T24:00:00Z`), 'querystring.since');
    assert.match((await call(`${related}?since=2010-02-30`)).body.message, /RFC 3339 date/);
    assert.equal((await call(`${related}?since=2012-02-29&until=2030-01-01T00:00:00%2B09:00`)).status, 200);
    bad(await call({ method: 'POST', url: '/v1/collections/articles/related', payload: { text: 'スマートフォン', filters: { since: '2010-02-30' } } }), 'body.filters.since');
    for (const k of ['0x10', '1e1', '0b1', '+0x1', ' 5', '1.0']) bad(await call(`${related}?k=${encodeURIComponent(k)}`), 'querystring.k');
    assert.equal((await call(`${related}?k=16`)).body.results.length, 16);
    bad(await call('/v1/match?collection=ads&for=x&min_score=0x1'), 'querystring.min_score');
    bad(await call('/v1/match?collection=ads&for=x&k=0x10'), 'querystring.k');
    // JSON bodies are typed: a string or a boolean is not read as a number.
    for (const k of ['0x10', '16', true]) {
      bad(await call({ method: 'POST', url: '/v1/collections/articles/related', payload: { text: 'スマートフォン', k } }), 'body.k');
    }
    assert.equal((await call({ method: 'POST', url: '/v1/collections/articles/related', payload: { text: 'スマートフォン', k: 3 } })).body.results.length, 3);

    const put = await call({
      method: 'PUT', url: '/v1/collections/articles/documents/h-date', headers: KEY,
      payload: { body: 'プロ野球の試合', published_at: '2010-02-30' },
    });
    bad(put, 'body.published_at');
    assert.equal((await call(`/v1/collections/articles/documents/h-date`)).status, 404, 'nothing stored');
    const ok = await call({
      method: 'PUT', url: '/v1/collections/articles/documents/h-date', headers: KEY,
      payload: { body: 'プロ野球の試合', published_at: '2012-02-29' },
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal((await call(`/v1/collections/articles/documents/h-date`)).body.published_at, '2012-02-29T00:00:00.000Z');

    const sim = (/** @type {any} */ a) => call({ method: 'POST', url: '/v1/similarity', payload: { a, b: { id: DOC } } });
    for (const a of [{}, { id: DOC, text: 'テスト' }, { id: DOC, title: 't' }, { text: 't', collection: 'articles' }]) {
      const r = await sim(a);
      bad(r, 'body.a');
      assert.match(r.body.message, /exactly one of/);
    }
    assert.equal((await sim({ id: DOC })).status, 200);
  } finally {
    await srv.close();
  }
});

test('a method the path lacks is 405 with Allow; the OpenAPI document states the checks', async () => {
  const srv = await start({ openReads: false });
  try {
    const related = `/v1/collections/articles/documents/${DOC}/related`;
    for (const [method, url, allow] of [
      ['DELETE', related, 'GET, HEAD'], ['TRACE', related, 'GET, HEAD'], ['POST', '/healthz', 'GET, HEAD'],
      ['GET', '/v1/similarity', 'POST'], ['PATCH', `/v1/collections/articles/documents/${DOC}`, 'DELETE, GET, HEAD, PUT'],
    ]) {
      // Without a key and with a body the route would refuse: the method is what is wrong.
      const r = await srv.app.inject({ method: /** @type {any} */ (method), url, payload: method === 'POST' ? 'x' : undefined, headers: method === 'POST' ? { 'content-type': 'text/plain' } : {} });
      assert.equal(r.statusCode, 405, `${method} ${url}: ${r.body}`);
      assert.equal(r.headers.allow, allow);
      assert.equal(r.json().error, 'SCDV_METHOD_NOT_ALLOWED');
    }
    assert.equal((await srv.app.inject({ method: 'TRACE', url: '/nowhere', headers: KEY })).statusCode, 404);

    const doc = (await srv.app.inject({ url: '/docs/json', headers: KEY })).json();
    const params = doc.paths['/v1/collections/{collection}/documents/{id}/related'].get.parameters;
    const since = params.find((/** @type {any} */ p) => p.name === 'since').schema;
    assert.deepEqual(since.anyOf.map((/** @type {any} */ s) => s.format), ['date', 'date-time']);
    const coll = params.find((/** @type {any} */ p) => p.name === 'collection').schema;
    assert.equal(coll.pattern, COLLECTION_NAME_RE.source);
    const simBody = doc.paths['/v1/similarity'].post.requestBody.content['application/json'].schema;
    assert.equal(simBody.properties.a.oneOf.length, 2);
    const put = doc.paths['/v1/collections/{collection}/documents/{id}'].put.requestBody.content['application/json'].schema;
    assert.deepEqual(put.properties.published_at.anyOf.map((/** @type {any} */ s) => s.format), ['date', 'date-time']);
    const bulk = doc.paths['/v1/collections/{collection}/documents:bulk'].post.requestBody.content['application/x-ndjson'].schema;
    assert.deepEqual([bulk.type, bulk.format], ['string', 'binary']);
  } finally {
    await srv.close();
  }
});

test('the queue board is read-only: adding, editing, retrying, cleaning, emptying and pausing are refused; /admin leads to it', async () => {
  const srv = await start({});
  try {
    const board = '/admin/queues/api/queues';
    const index = srv.ctx.hub?.queues.index;
    assert.ok(index);
    // A job as the bulk route queues it, to copy: the board would have run it with any payload.
    const real = await index.add('shard', { runKey: 'bulk-copied', corpus: '/x', note: 'queued by the API' }, { jobId: 'board-copied-0' });
    const before = await index.getJobCounts();
    const attack = { name: 'shard', data: { ...real.data, corpus: '/etc/passwd', outDir: '/some/where' } };
    const mutating = [
      { method: 'POST', url: `${board}/index/add`, payload: attack },
      { method: 'PATCH', url: `${board}/index/${real.id}/update-data`, payload: { data: attack.data } },
      { method: 'PUT', url: `${board}/index/${real.id}/retry` }, { method: 'PUT', url: `${board}/index/retry/failed` },
      { method: 'PUT', url: `${board}/index/${real.id}/clean` }, { method: 'PUT', url: `${board}/index/clean/completed` },
      { method: 'PUT', url: `${board}/index/empty` }, { method: 'PUT', url: `${board}/index/obliterate` },
      { method: 'PUT', url: `${board}/index/pause` }, { method: 'PUT', url: `${board}/pause` }, { method: 'PUT', url: `${board}/index/promote` },
    ];
    for (const m of mutating) {
      const r = await h.inject(srv.app, { ...m, headers: KEY });
      assert.equal(r.status, 405, `${m.method} ${m.url}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error, 'SCDV_BOARD_READ_ONLY');
    }
    assert.deepEqual(await index.getJobCounts(), before, 'no job added, removed or moved');
    assert.deepEqual((await index.getJob(real.id))?.data, real.data, 'the job\'s data unchanged');
    assert.equal(await index.isPaused(), false);
    // Reading still works, and the board says it is read-only (its UI shows no buttons).
    const list = await h.inject(srv.app, { url: `${board}?activeQueue=index&status=waiting&page=1`, headers: KEY });
    assert.equal(list.status, 200);
    assert.ok(list.body.queues.length >= 4 && list.body.queues.every((/** @type {any} */ q) => q.readOnlyMode === true));
    await real.remove();
    const root = await srv.app.inject({ url: '/admin' });
    assert.equal(root.statusCode, 302);
    assert.equal(root.headers.location, '/admin/queues');
  } finally {
    await srv.close();
  }
});

test('GET /v1/jobs/<id> without a key shows state and counts only; the failure reason, model and collection need the key', async () => {
  const srv = await start({});
  try {
    const r = await h.inject(srv.app, {
      method: 'POST', url: '/v1/collections/job-secret/documents:bulk', payload: '{"id":"a","body":"野球の試合"}\n',
      headers: { ...KEY, 'content-type': 'application/x-ndjson' },
    });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    // No worker runs here: fail the shard as a worker would, with a reason that must not be shown to anyone.
    const shard = /** @type {import('bull').Job} */ (await /** @type {any} */ (srv.ctx.hub?.queues.index).getNextJob());
    assert.equal(shard?.id, `${r.body.job}-0`);
    shard.discard();
    await shard.moveToFailed({ message: 'invalid JSON: Unexpected token \'r\', "root:x:0:0"' });
    const open = await h.inject(srv.app, { url: r.body.status_url });
    assert.equal(open.status, 200);
    assert.equal(open.body.state, 'failed');
    assert.equal(open.body.redacted, true);
    assert.deepEqual(open.body.shards, { total: 1, done: 0, failed: 1 });
    for (const k of ['model', 'collection', 'issues', 'errors']) assert.ok(!(k in open.body), `${k} is not shown without a key`);
    assert.ok(!JSON.stringify(open.body).includes('root:x') && !JSON.stringify(open.body).includes('job-secret'), JSON.stringify(open.body));
    const keyed = await h.inject(srv.app, { url: r.body.status_url, headers: KEY });
    assert.equal(keyed.body.redacted, false);
    assert.equal(keyed.body.collection, 'job-secret');
    assert.match(keyed.body.errors[0].message, /invalid JSON/);
    const wrong = await h.inject(srv.app, { url: r.body.status_url, headers: { authorization: 'Bearer wrong-key' } });
    assert.equal(wrong.status, 403);
    assert.ok(!JSON.stringify(wrong.body).includes('root:x'));
  } finally {
    await srv.close();
  }
});

test('ids that differ only in a lone surrogate are refused naming the field, never written as one document', async () => {
  const srv = await start({});
  try {
    const lines = ['{"id":"t\\ud800","body":"プロ野球の試合"}', '{"id":"t\\udbff","body":"サッカーの試合"}', '{"id":"t\\ud83d\\ude00","body":"映画の試写会"}'];
    const res = await srv.app.inject({
      method: 'POST', url: '/v1/collections/surrogates/documents:bulk?sync=true', headers: { ...KEY, 'content-type': 'application/x-ndjson' }, payload: lines.join('\n'),
    });
    assert.equal(res.statusCode, 200, res.body);
    const items = res.json().items;
    assert.deepEqual(items.map((/** @type {any} */ i) => i.status), [400, 400, 200], res.body);
    for (const i of items.slice(0, 2)) {
      assert.equal(i.error.field, 'id');
      assert.match(i.error.message, /lone surrogate/);
    }
    assert.equal(items[2].id, 't😀', 'a surrogate pair is one character, written');
    const stored = await srv.app.inject('/v1/collections');
    assert.equal(stored.json().collections.find((/** @type {any} */ c) => c.name === 'surrogates')?.count, 1);
    // JSON bodies that name a document: the same rule where the id is used, a 400 that says why.
    const related = await srv.app.inject({ method: 'POST', url: '/v1/similarity', payload: { a: { id: 't\ud800', collection: 'surrogates' }, b: { id: DOC } } });
    assert.equal(related.statusCode, 400, related.body);
    assert.match(related.json().message, /lone surrogate/);
    const match = await srv.app.inject({ method: 'POST', url: '/v1/match', payload: { collection: 'ads', text: 'サッカー', page_id: 't\udbff' } });
    assert.equal(match.statusCode, 400, match.body);
    assert.equal(match.json().details.field, 'body.page_id');
  } finally {
    await srv.close();
  }
});
