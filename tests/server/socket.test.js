// The server over real sockets: HTTP keep-alive clients, a model switch under load without one failed
// request, graceful shutdown with requests in flight, and `--workers 2` (node:cluster) following one
// activation in both processes and stopping cleanly on SIGTERM.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const h = await import('./helpers.js');
const { waitFor } = await import('../lib/wait.js');
const { startServer } = await import('../../server/start.js');

/** @type {string} */
let redisUrl;
const KEY = { authorization: `Bearer ${h.API_KEY}` };
const DOC = 'sports-watch-4597641';

before(async () => { ({ redis: { url: redisUrl } } = await h.setup()); });
after(async () => { await h.teardown(); });

test('real socket: reads and writes over HTTP/1.1 keep-alive', async () => {
  const srv = await startServer({ config: h.testConfig(), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    assert.match(srv.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const r = await fetch(`${srv.url}/v1/collections/articles/documents/${DOC}/related?k=3`);
    assert.equal(r.status, 200);
    assert.match(String(r.headers.get('content-type')), /application\/json/);
    assert.equal((/** @type {any} */ (await r.json())).results.length, 3);
    const put = await fetch(`${srv.url}/v1/collections/articles/documents/sock-1`, {
      method: 'PUT', headers: { ...KEY, 'content-type': 'application/json' }, body: JSON.stringify({ title: '野球', body: 'プロ野球の試合で投手が完封した' }),
    });
    assert.equal(put.status, 200);
    const del = await fetch(`${srv.url}/v1/collections/articles/documents/sock-1`, { method: 'DELETE', headers: KEY });
    assert.equal(del.status, 200);
    const bad = await fetch(`${srv.url}/v1/collections/articles/related`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    assert.equal(bad.status, 400);
    assert.equal((/** @type {any} */ (await bad.json())).error, 'SCDV_REQUEST_INVALID');
  } finally {
    await srv.close();
  }
});

test('activating another model under load: no request fails, answers switch model', async () => {
  const srv = await startServer({ config: h.testConfig(), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  try {
    const docs = h.sampleDocs().slice(0, 50).map((d) => d.id);
    /** @type {Map<string, number>} */
    const seen = new Map();
    let failures = 0;
    let requests = 0;
    let stop = false;
    const client = async (/** @type {number} */ c) => {
      for (let i = c; !stop; i += 7) {
        const path = i % 3 === 0
          ? { url: `/v1/collections/articles/related`, init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'サッカーの試合と監督', k: 5 }) } }
          : { url: `/v1/collections/articles/documents/${docs[i % docs.length]}/related?k=5`, init: {} };
        try {
          const r = await fetch(srv.url + path.url, path.init);
          const b = /** @type {any} */ (await r.json());
          if (r.status !== 200) failures++; else seen.set(b.model, (seen.get(b.model) ?? 0) + 1);
        } catch {
          failures++;
        }
        requests++;
      }
    };
    const clients = Array.from({ length: 12 }, (_, c) => client(c));
    // Each model serves a few rounds of the 12 clients: a count of answered requests, not a time (which a loaded
    // machine stretches).
    const answered = (/** @type {number} */ n) => {
      const target = requests + n;
      return waitFor(() => requests >= target, { timeoutMs: 30_000, what: `${n} more requests answered`, last: () => ({ requests, failures }) });
    };
    await answered(36);
    for (const m of [h.MODEL_B, h.MODEL_A, h.MODEL_B]) {
      const a = await fetch(`${srv.url}/v1/models/${m}/activate`, { method: 'POST', headers: KEY });
      assert.equal(a.status, 200, await a.text());
      await answered(36);
    }
    stop = true;
    await Promise.all(clients);
    assert.equal(failures, 0, `${failures} of ${requests} requests failed`);
    assert.ok(requests > 100, `${requests} requests`);
    assert.ok((seen.get(h.MODEL_A) ?? 0) > 0 && (seen.get(h.MODEL_B) ?? 0) > 0, JSON.stringify([...seen]));
  } finally {
    await srv.close();
    // Leave model A active for the tests that follow.
    const { activeRecords } = await import('../../pipeline/serving/index.js');
    if ((await activeRecords(h.testConfig()).read())?.model !== h.MODEL_A) {
      const s = await startServer({ config: h.testConfig(), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
      await s.close();
    }
  }
});

test('graceful shutdown: requests in flight finish, then the port closes', async () => {
  let received = 0;
  const srv = await startServer({
    config: h.testConfig(), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0,
    // A slow route, so that requests are surely in flight when the shutdown starts.
    configure: (app) => { app.get('/test/slow', async () => { received++; await new Promise((r) => setTimeout(r, 300)); return { ok: true }; }); },
  });
  const inflight = Array.from({ length: 8 }, () => fetch(`${srv.url}/test/slow`).then((r) => r.status, (e) => String(e)));
  while (received < 8) await new Promise((r) => setTimeout(r, 5));
  const t0 = Date.now();
  const closing = srv.close();
  const results = await Promise.all(inflight);
  await closing;
  assert.deepEqual(results, Array(8).fill(200));
  assert.ok(Date.now() - t0 < 3000, `closed in ${Date.now() - t0} ms (keep-alive connections do not hold it)`);
  await assert.rejects(fetch(`${srv.url}/healthz`), 'the port is closed');
});

test('--workers 2: one port, both processes follow an activation, SIGTERM stops everything', async () => {
  const start = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'server', 'start.js');
  const code = `
    const { runServe } = await import(${JSON.stringify(start)});
    const { loadConfig } = await import(${JSON.stringify(path.join(path.dirname(start), '..', 'pipeline', 'config.js'))});
    const cfg = loadConfig({ overrides: JSON.parse(process.env.CFG) });
    await runServe({ config: cfg, model: ${JSON.stringify(h.MODEL_A)}, redisUrl: process.env.R, host: '127.0.0.1', port: 0, workers: 2, indexWorkers: 0,
      onListening: (url) => console.log('URL ' + url) });
  `;
  const cfg = h.testConfig();
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
    env: { ...process.env, R: redisUrl, CFG: JSON.stringify({ embed: cfg.embed, server: cfg.server }) }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const url = await new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).on('line', (l) => { if (l.startsWith('URL ')) resolve(l.slice(4)); });
    child.once('exit', (c) => reject(new Error(`exited ${c}: ${stderr}`)));
  });
  try {
    let sent = 0;
    /** @type {string[]} */
    let answered = [];
    const models = async () => {
      const rs = await Promise.all(Array.from({ length: 12 }, () => fetch(`${url}/v1/collections`, { headers: { connection: 'close' } }).then((r) => /** @type {Promise<any>} */ (r.json()))));
      sent += rs.length;
      answered = rs.map((b) => b.model);
      return new Set(answered);
    };
    assert.deepEqual(await models(), new Set([h.MODEL_A]));
    const a = await fetch(`${url}/v1/models/${h.MODEL_B}/activate`, { method: 'POST', headers: KEY });
    assert.equal(a.status, 200);
    // The other process follows through the active-model file (polled every 100 ms here): 12 requests spread over
    // both processes all answer with B, within a generous time.
    await waitFor(async () => (await models()).size === 1 && answered[0] === h.MODEL_B, {
      timeoutMs: 20_000, everyMs: 100, what: 'both processes to serve the model activated in one of them', last: () => answered,
    });
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const count = Number(/scdv_http_request_duration_seconds_count\{method="GET",route="\/v1\/collections",status="200"\} (\d+)/.exec(metrics)?.[1]);
    assert.equal(count, sent, 'one scrape sees the requests of both processes');
    await fetch(`${url}/v1/models/${h.MODEL_A}/activate`, { method: 'POST', headers: KEY });
  } finally {
    child.kill('SIGTERM');
  }
  const exit = await new Promise((r) => child.once('exit', (c, s) => r(c ?? s)));
  assert.equal(exit, 0, stderr);
  await assert.rejects(fetch(`${url}/healthz`));
});
