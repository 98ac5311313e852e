// Security: every write and admin route of the OpenAPI document, and Bull Board, refuse a request without a key
// (401, with WWW-Authenticate) and with a wrong one (403), by either header; a key in the query string counts for
// nothing. The server (`scdv serve`, logging at debug level, every request logged) never writes a key to its
// logs, and never writes the Redis password to its logs or an error body, through a Redis outage and a start
// with a wrong password. Jobs are not trusted: a bulk job copied with `corpus: "/etc/passwd"` and an `outDir`
// elsewhere cannot be added through the board, and queued straight into Redis it is refused by the worker before it
// reads or writes anything, with a reason that quotes nothing of the file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { restartableRedis, report, sleep, waitFor } from './lib.js';
import { serveProcess } from './serve.js';

const h = await import('../server/helpers.js');
const { startServer } = await import('../../server/start.js');
const { keyDigest } = await import('../../pipeline/api-keys.js');
const { ADMIN_PATH } = await import('../../server/routes/admin.js');
const { indexShardJob } = await import('../../pipeline/queue/index-job.js');
const { dataDir } = await import('../../pipeline/paths.js');

before(async () => { await h.setup(); });
after(async () => { await h.teardown(); });

/** Distinctive secrets, so that a match in a log cannot be anything else. */
const GOOD_KEY = 'good-key-Zq7Vt3Xw9Lm2Pk5R';
const WRONG_KEY = 'wrong-key-Hn4Bc8Yd1Fg6Js0T';
const REDIS_PASSWORD = 'redis-pw-Qe5Wr2Ty7Ui4Op9A';

/** @param {string} url @param {RequestInit} [init] */
async function call(url, init) {
  const r = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  const raw = await r.text();
  let body = null;
  try { body = JSON.parse(raw); } catch { /* not JSON */ }
  return { status: r.status, body, raw, www: r.headers.get('www-authenticate') };
}

test('write and admin routes (and Bull Board) answer 401 without a key and 403 with a wrong one', async (t) => {
  // Hundreds of wrong keys from one address: without the wrong-key limits (server.keyFailures), each is a plain 403.
  const config = h.testConfig({ apiKeyHashes: [keyDigest(GOOD_KEY)], keyFailures: { perAddress: 0, perKey: 0, total: 0, windowS: 900 } });
  const srv = await startServer({ config, model: h.MODEL_A, redisUrl: (await h.setup()).redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    const openapi = /** @type {any} */ (await (await fetch(`${srv.url}/docs/json`)).json());
    /** @type {{method: string, url: string, body?: string, type?: string}[]} */
    const targets = [];
    for (const [p, methods] of Object.entries(openapi.paths)) {
      for (const [method, op] of Object.entries(/** @type {Record<string, any>} */ (methods))) {
        if (!op.security?.length || op.security.some((/** @type {object} */ s) => Object.keys(s).length === 0)) continue; // {}: anonymous callers too
        const url = p.replace('{collection}', 'articles').replace('{id}', 'sec-doc').replace('{name}', h.MODEL_B);
        const type = op.requestBody ? Object.keys(op.requestBody.content)[0] : undefined;
        targets.push({ method: method.toUpperCase(), url, type, body: type ? JSON.stringify(type === 'application/json' && url.endsWith(':bulk') ? { path: 'x.jsonl' } : { body: '野球の試合' }) : undefined });
      }
    }
    const writeRoutes = targets.length;
    assert.ok(writeRoutes >= 4, `${writeRoutes} key-protected operations documented`);
    for (const p of ['', '/', '/api/queues', '/api/queues?activeQueue=embed&page=1', '/api/queues/embed/clean/failed', '/static/css/main.css', '/../queues']) {
      targets.push({ method: p.includes('clean') ? 'PUT' : 'GET', url: ADMIN_PATH + p });
    }
    /** @type {Record<string, number>} */
    const counts = { unauthorized: 0, forbidden: 0 };
    for (const tg of targets) {
      /** @type {Record<string, string>} */
      const headers = tg.type ? { 'content-type': tg.type } : {};
      const none = await call(srv.url + tg.url, { method: tg.method, headers, body: tg.body });
      assert.equal(none.status, 401, `${tg.method} ${tg.url} without a key: ${none.raw.slice(0, 200)}`);
      assert.equal(none.body?.error, 'SCDV_UNAUTHORIZED');
      assert.equal(none.www, 'Bearer');
      counts.unauthorized++;
      /** @type {Record<string, string>[]} */
      const wrongs = [{ authorization: `Bearer ${WRONG_KEY}` }, { 'x-api-key': WRONG_KEY }, { authorization: `Basic ${Buffer.from(`u:${GOOD_KEY}`).toString('base64')}`, 'x-api-key': WRONG_KEY }];
      for (const h2 of wrongs) {
        const wrong = await call(srv.url + tg.url, { method: tg.method, headers: { ...headers, ...h2 }, body: tg.body });
        assert.equal(wrong.status, 403, `${tg.method} ${tg.url} with a wrong key: ${wrong.raw.slice(0, 200)}`);
        assert.equal(wrong.body?.error, 'SCDV_FORBIDDEN');
        assert.ok(!wrong.raw.includes(WRONG_KEY), 'the key is not echoed');
        counts.forbidden++;
      }
      const inQuery = await call(`${srv.url}${tg.url}${tg.url.includes('?') ? '&' : '?'}api_key=${GOOD_KEY}&key=${GOOD_KEY}`, { method: tg.method, headers, body: tg.body });
      assert.ok([400, 401].includes(inQuery.status), `a key in the query string is not a key: ${tg.method} ${tg.url} -> ${inQuery.status}`);
    }
    // With the right key the board opens, by either header.
    assert.equal((await call(`${srv.url}${ADMIN_PATH}/api/queues`, { headers: { authorization: `Bearer ${GOOD_KEY}` } })).status, 200);
    assert.equal((await call(`${srv.url}${ADMIN_PATH}/api/queues`, { headers: { 'x-api-key': GOOD_KEY } })).status, 200);
    // Reads stay open (server.openReads), health checks always.
    assert.equal((await call(`${srv.url}/v1/models`)).status, 200);
    assert.equal((await call(`${srv.url}/healthz`)).status, 200);
    report(t, 'auth', { keyProtectedOperations: writeRoutes, boardPaths: targets.length - writeRoutes, ...counts });
  } finally {
    await srv.close();
  }
});

test('wrong keys over HTTP: 429 past the limits (header path and login alike), never the owner locked out', async (t) => {
  const config = h.testConfig({ apiKeyHashes: [keyDigest(GOOD_KEY)], trustProxy: true });
  const srv = await startServer({ config, model: h.MODEL_A, redisUrl: (await h.setup()).redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    /** @type {Record<string, number>} */
    const statuses = {};
    for (let i = 0; i < 200; i++) {
      // A new key from a new address each time (a rotating X-Forwarded-For): only the total over all addresses binds.
      const r = await call(`${srv.url}${ADMIN_PATH}/api/queues`, { headers: { authorization: `Bearer ${WRONG_KEY}-${i}`, 'x-forwarded-for': `10.1.${i}.1` } });
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      assert.ok(!r.raw.includes(WRONG_KEY), 'the key is not echoed');
      if (r.status === 429) assert.equal(r.body?.error, 'SCDV_LOGIN_RATE_LIMITED');
    }
    const { total } = config.server.keyFailures;
    assert.deepEqual(statuses, { 403: total, 429: 200 - total });
    assert.equal((await call(`${srv.url}${ADMIN_PATH}/api/queues`, { headers: { authorization: `Bearer ${GOOD_KEY}`, 'x-forwarded-for': '10.1.0.1' } })).status, 200);
    const login = await call(`${srv.url}/admin/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: GOOD_KEY }) });
    assert.equal(login.status, 204);
    report(t, 'wrong-keys', statuses);
  } finally {
    await srv.close();
  }
});

test('with reads closed (openReads: false) read routes need a key too; health checks stay open', async () => {
  const config = h.testConfig({ apiKeyHashes: [keyDigest(GOOD_KEY)], openReads: false });
  const srv = await startServer({ config, model: h.MODEL_A, redisUrl: (await h.setup()).redis.url, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    const doc = h.sampleDocs()[0].id;
    for (const url of ['/v1/models', '/v1/collections', `/v1/collections/articles/documents/${doc}/related`]) {
      assert.equal((await call(srv.url + url)).status, 401, url);
      assert.equal((await call(srv.url + url, { headers: { 'x-api-key': WRONG_KEY } })).status, 403, url);
      assert.equal((await call(srv.url + url, { headers: { 'x-api-key': GOOD_KEY } })).status, 200, url);
    }
    for (const url of ['/healthz', '/readyz']) assert.equal((await call(srv.url + url)).status, 200, url);
  } finally {
    await srv.close();
  }
});

test('keys and the Redis password never appear in logs or error bodies (debug logging, an outage, a wrong password)', async (t) => {
  const redis = await restartableRedis({ password: REDIS_PASSWORD });
  const config = h.testConfig({ apiKeyHashes: [keyDigest(GOOD_KEY)], logLevel: 'debug' });
  /** @type {string[]} */
  const bodies = [];
  const doc = h.sampleDocs()[0].id;
  let srv = await serveProcess({ config, model: h.MODEL_A, redisUrl: redis.url, dir: h.tmp, indexWorkers: 1 });
  /** @type {string[]} */
  let logs = [];
  try {
    const keyed = { authorization: `Bearer ${GOOD_KEY}`, 'content-type': 'application/json' };
    let phase = 'up';
    const requests = async () => {
      /** @type {{url: string, method: string, headers: Record<string, string>, body?: string}[]} */
      const list = [
        { url: `/v1/collections/articles/documents/sec-1`, method: 'PUT', headers: keyed, body: JSON.stringify({ body: '野球の試合で投手が完封した' }) },
        { url: `/v1/collections/articles/documents/sec-1`, method: 'PUT', headers: { ...keyed, authorization: `Bearer ${WRONG_KEY}` }, body: '{}' },
        { url: `/v1/collections/articles/documents/sec-1`, method: 'PUT', headers: { 'x-api-key': WRONG_KEY, 'content-type': 'application/json' }, body: '{}' },
        { url: `/v1/collections/articles/documents:bulk`, method: 'POST', headers: { ...keyed, 'content-type': 'application/x-ndjson' }, body: '{"id":"sec-b","body":"サッカー"}\n' },
        { url: `/v1/collections/articles/documents/${doc}/related?k=3`, method: 'GET', headers: { 'x-api-key': GOOD_KEY } },
        { url: `/v1/match?collection=ads&for=${doc}`, method: 'GET', headers: {} },
        { url: `${ADMIN_PATH}/api/queues`, method: 'GET', headers: { 'x-api-key': GOOD_KEY } },
        { url: `/v1/models/${h.MODEL_A}/activate`, method: 'POST', headers: { authorization: `Bearer ${GOOD_KEY}` } },
        { url: '/metrics', method: 'GET', headers: {} },
        { url: '/readyz', method: 'GET', headers: {} },
      ];
      for (const init of list) {
        const t0 = Date.now();
        const r = await call(srv.url + init.url, init).catch((err) => {
          throw new Error(`${init.method} ${init.url} (${phase}): ${err.message} after ${Date.now() - t0} ms`);
        });
        assert.ok(r.status < 500 || r.status === 503, `${init.method} ${init.url} (${phase}) -> ${r.status} ${r.raw.slice(0, 200)}`);
        bodies.push(r.raw);
      }
    };
    await requests();
    await redis.stop('SIGKILL'); // an outage: connection errors get logged
    await sleep(1500);
    phase = 'outage';
    await requests();
    await redis.start();
    phase = 'back';
    await waitFor(async () => (await call(`${srv.url}/readyz`)).body?.redis === 'up', { timeoutMs: 15_000, what: 'Redis back' });
    await requests();
    await srv.stop('SIGTERM');
    logs = [...srv.logs];

    // A start with a wrong Redis password: it serves reads, says Redis is down, and names no password.
    const wrongUrl = redis.url.replace(encodeURIComponent(REDIS_PASSWORD), 'not-the-password-Kx3');
    srv = await serveProcess({ config, model: h.MODEL_A, redisUrl: wrongUrl, dir: h.tmp, indexWorkers: 1 });
    await sleep(1500);
    phase = 'wrong password';
    const ready = await call(`${srv.url}/readyz`);
    bodies.push(ready.raw);
    assert.equal(ready.body?.redis, 'down');
    await requests();
    await srv.stop('SIGTERM');
    logs.push(...srv.logs);
  } finally {
    await srv.stop('SIGKILL');
    await redis.close();
  }
  const text = logs.join('\n');
  assert.ok(logs.length > 20, `the server logged (${logs.length} lines)`);
  assert.ok(/"url":"\/v1\/collections\/articles\/documents\/sec-1"/.test(text) || /sec-1/.test(text), 'requests are in the debug log');
  for (const secret of [GOOD_KEY, WRONG_KEY, REDIS_PASSWORD, 'not-the-password-Kx3']) {
    assert.ok(!text.includes(secret), `${secret.slice(0, 9)}… is not in the logs: ${logs.filter((l) => l.includes(secret)).slice(0, 2).join(' | ').slice(0, 400)}`);
    assert.ok(!bodies.some((b) => b.includes(secret)), `${secret.slice(0, 9)}… is not in any answer`);
  }
  report(t, 'secrets-in-logs', { logLines: logs.length, answers: bodies.length, secretsChecked: 4, found: 0 });
});

test('a bulk job copied with corpus /etc/passwd and outDir elsewhere: the board refuses it, the worker refuses it unread', async (t) => {
  const config = h.testConfig({ apiKeyHashes: [keyDigest(GOOD_KEY)] });
  const srv = await startServer({ config, model: h.MODEL_A, redisUrl: (await h.setup()).redis.url, host: '127.0.0.1', port: 0, indexWorkers: 1 });
  const elsewhere = path.join(os.tmpdir(), `scdv-elsewhere-${process.pid}`);
  fs.rmSync(elsewhere, { recursive: true, force: true });
  const keyed = { authorization: `Bearer ${GOOD_KEY}` };
  try {
    const hub = /** @type {import('../../server/redis-queues.js').QueueHub} */ (srv.ctx.hub);
    /** @param {string} lines */
    const bulk = async (lines) => {
      const r = await call(`${srv.url}/v1/collections/sec-bulk/documents:bulk`, { method: 'POST', headers: { ...keyed, 'content-type': 'application/x-ndjson' }, body: lines });
      assert.equal(r.status, 202, r.raw);
      return /** @type {any} */ (await waitFor(async () => {
        const s = await call(`${srv.url}${r.body.status_url}`, { headers: keyed });
        return ['completed', 'failed'].includes(s.body?.state) ? s.body : null;
      }, { timeoutMs: 60_000, what: 'a bulk job' }));
    };
    const real = await bulk('{"id":"sec-b1","body":"野球の試合で投手が完封した"}\n');
    assert.equal(real.state, 'completed');
    // The board shows what ran: the finished shard job stays (queue.keepCompleted).
    const shown = await call(`${srv.url}${ADMIN_PATH}/api/queues?activeQueue=index&status=completed&page=1`, { headers: keyed });
    const indexQueue = shown.body.queues.find((/** @type {any} */ q) => q.name === 'index');
    assert.ok(indexQueue.counts.completed >= 1, JSON.stringify(indexQueue.counts));
    assert.ok(indexQueue.jobs.some((/** @type {any} */ j) => j.id === `${real.id}-0`), 'the bulk job\'s shard is listed');
    // The job as the bulk route queued it (the one builder), with its paths moved.
    const record = JSON.parse(fs.readFileSync(path.join(dataDir(), 'server', 'jobs', real.id, 'job.json'), 'utf8'));
    const copied = indexShardJob({ runKey: real.id, corpus: record.corpus, outDir: path.join(dataDir(), 'server', 'jobs', real.id), model: record.model, collection: record.collection, config, duplicates: new Map() }, record.shards[0]);
    const attacks = [
      { ...copied, runKey: 'attack-1', corpus: '/etc/passwd', shard: { index: 0, start: 0, end: fs.statSync('/etc/passwd').size, firstLine: 1, lines: 1 } },
      { ...copied, runKey: 'attack-2', outDir: elsewhere },
      { ...copied, runKey: 'attack-3', config: { ...copied.config, store: config.store } },
    ];
    const before = await hub.queues.index.getJobCounts();
    const viaBoard = await call(`${srv.url}${ADMIN_PATH}/api/queues/index/add`, {
      method: 'POST', headers: { ...keyed, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'shard', data: attacks[0], options: {} }),
    });
    assert.equal(viaBoard.status, 405, viaBoard.raw);
    assert.equal(viaBoard.body?.error, 'SCDV_BOARD_READ_ONLY');
    assert.equal((await hub.queues.index.getJobCounts()).waiting, before.waiting, 'nothing was queued through the board');
    // Whoever can still write to the Redis: the worker checks the job before touching a file.
    /** @type {string[]} */
    const reasons = [];
    for (const data of attacks) {
      const job = await hub.queues.index.add('shard', data, { jobId: `${data.runKey}-0` });
      const state = await waitFor(async () => {
        const s = await job.getState();
        return s === 'failed' || s === 'completed' ? s : null;
      }, { timeoutMs: 30_000, what: `the worker to take ${data.runKey}` });
      const done = await hub.queues.index.getJob(String(job.id));
      assert.equal(state, 'failed', `${data.runKey} ran: ${JSON.stringify(done?.returnvalue)}`);
      assert.equal(done?.attemptsMade, 1, 'refused at once, not retried');
      reasons.push(String(done?.failedReason));
    }
    assert.match(reasons[0], /refused before any work: corpus is outside the folders/);
    assert.match(reasons[1], /refused before any work: outDir is outside the folders/);
    assert.match(reasons[2], /refused before any work: config has the key "store"/);
    for (const r of reasons) assert.ok(!r.includes('root:') && !r.includes('/bin/'), `no content of the file: ${r}`);
    assert.ok(!fs.existsSync(elsewhere), `${elsewhere} was not created`);
    // The worker lives on and takes the next real job.
    assert.equal((await bulk('{"id":"sec-b2","body":"サッカーの試合で得点した"}\n')).documents, 1);
    report(t, 'jobs-not-trusted', { boardAdd: viaBoard.status, refusedJobs: reasons.length, filesCreatedOutside: 0 });
  } finally {
    await srv.close();
    fs.rmSync(elsewhere, { recursive: true, force: true });
  }
});
