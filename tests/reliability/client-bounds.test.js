// One client against the others: a client that opens more connections than its share (server.maxConnectionsPerClient)
// or than the process takes (server.maxConnections) does not keep others out, and a client that pipelines requests
// without reading the answers does not make the server hold them (server.socketBufferBytes, socketStallMs,
// maxPipelined). Loopback only: 127.0.0.1 is the heavy client, 127.0.0.2 the other one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import fs from 'node:fs';
import { report, sleep } from './lib.js';
import { serveProcess } from './serve.js';

const h = await import('../server/helpers.js');
const { startServer } = await import('../../server/start.js');

/** @type {string} */
let redisUrl;
before(async () => { ({ redis: { url: redisUrl } } = await h.setup()); });
after(async () => { await h.teardown(); });

/**
 * Open a raw connection from `localAddress`; resolves once connected (or with null when refused or reset first).
 * @param {URL} url @param {string} localAddress
 * @returns {Promise<net.Socket>}
 */
function connect(url, localAddress = '127.0.0.1') {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: url.hostname, port: Number(url.port), localAddress });
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

/**
 * One request on a raw socket and its whole answer (status and body), the connection kept open.
 * @param {net.Socket} s @param {string} path
 */
function ask(s, path) {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (/** @type {Buffer} */ d) => {
      buf += d.toString('latin1');
      const head = buf.indexOf('\r\n\r\n');
      const len = Number(/content-length: (\d+)/i.exec(buf)?.[1]);
      if (head >= 0 && buf.length >= head + 4 + len) { s.off('data', onData); resolve({ status: Number(buf.slice(9, 12)), body: buf.slice(head + 4) }); }
    };
    s.on('data', onData);
    s.once('error', reject);
    s.once('close', () => reject(new Error(`closed: ${buf.slice(0, 200)}`)));
    s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}

/** GET from another client address, on a connection of its own. @param {URL} url @param {string} path */
async function otherClient(url, path = '/healthz') {
  const s = await connect(url, '127.0.0.2');
  try { return /** @type {{status: number, body: string}} */ (await ask(s, path)); } finally { s.destroy(); }
}

/** @param {string} text Prometheus text @param {string} name @param {string} labels */
const metric = (text, name, labels) => Number(new RegExp(`^${name}\\{${labels}\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);

test('1,030 idle keep-alive connections from one client: another client still gets in (default share, default cap)', async () => {
  const config = h.testConfig();
  assert.deepEqual([config.server.maxConnectionsPerClient, config.server.maxConnections], [256, 1024], 'the defaults under test');
  const srv = await startServer({ config, model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0 });
  const url = new URL(srv.url);
  /** @type {net.Socket[]} */
  const heavy = [];
  try {
    // Each connection asks once and stays open, idle, as a keep-alive client's would.
    for (let i = 0; i < 1030; i++) {
      const s = await connect(url);
      s.on('error', () => {});
      heavy.push(s);
      if (i % 100 === 0) assert.equal((/** @type {any} */ (await ask(s, '/healthz'))).status, 200);
    }
    await sleep(200);
    const open = heavy.filter((s) => !s.destroyed && !s.readableEnded).length;
    assert.ok(open <= 256, `the heavy client keeps at most its share open, has ${open}`);
    for (let i = 0; i < 5; i++) assert.equal((await otherClient(url)).status, 200, "the other client is answered");
    const m = await (await fetch(`${srv.url}/metrics`)).text();
    assert.ok(metric(m, 'scdv_connections_idle_closed_total', 'reason="client_share"') >= 1030 - 256, m.split('\n').filter((l) => l.includes('connections')).join('\n'));
  } finally {
    for (const s of heavy) s.destroy();
    await srv.close();
  }
});

test('a client at its share with every connection busy: the next one is answered 503 with Retry-After; others still get in', async () => {
  let started = 0;
  const srv = await startServer({
    config: h.testConfig({ maxConnectionsPerClient: 4, maxConnections: 6 }), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0,
    configure: (app) => { app.get('/test/slow', async () => { started++; await sleep(1500); return { ok: true }; }); },
  });
  const url = new URL(srv.url);
  /** @type {net.Socket[]} */
  const busy = [];
  try {
    for (let i = 0; i < 4; i++) {
      const s = await connect(url);
      s.on('error', () => {});
      s.write('GET /test/slow HTTP/1.1\r\nHost: x\r\n\r\n');
      busy.push(s);
    }
    while (started < 4) await sleep(10);
    const fifth = await connect(url);
    const answer = await new Promise((resolve) => { let b = ''; fifth.on('data', (d) => { b += d; }); fifth.on('close', () => resolve(b)); fifth.on('error', () => {}); });
    assert.match(String(answer), /^HTTP\/1\.1 503 /);
    assert.match(String(answer), /retry-after: 1/i);
    assert.match(String(answer), /SCDV_TOO_MANY_CONNECTIONS.*server\.maxConnectionsPerClient/);
    // The process has 2 connections left for the others.
    assert.equal((await otherClient(url)).status, 200);
    const m = (await otherClient(url, '/metrics')).body;
    assert.ok(metric(m, 'scdv_connections_refused_total', 'reason="client_share"') >= 1);
  } finally {
    for (const s of busy) s.destroy();
    await srv.close();
  }
});

/** Resident memory of a process, bytes. @param {number} pid */
const rss = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
const MB = 1024 * 1024;
const DOC = 'sports-watch-4597641';

test('100 clients pipelining 100 k=1000 requests each without reading the answers: the server holds a bounded amount, /healthz stays quick, the sockets are closed', async (t) => {
  const config = h.testConfig({ socketStallMs: 1000 });
  const srv = await serveProcess({ config, model: h.MODEL_A, redisUrl, dir: h.tmp });
  const url = new URL(srv.url);
  /** @type {net.Socket[]} */
  const socks = [];
  try {
    const one = await fetch(`${srv.url}/v1/collections/articles/documents/${DOC}/related?k=1000`);
    const answerBytes = (await one.arrayBuffer()).byteLength;
    const before = srv.rssBytes();
    const req = `GET /v1/collections/articles/documents/${DOC}/related?k=1000 HTTP/1.1\r\nHost: x\r\n\r\n`;
    for (let i = 0; i < 100; i++) {
      const s = await connect(url);
      s.on('error', () => {});
      s.pause(); // never read
      s.write(req.repeat(100));
      socks.push(s);
    }
    let peak = before;
    let worstHealthMs = 0;
    const healthMs = [];
    const t0 = Date.now();
    while (Date.now() - t0 < 4000) {
      const h0 = Date.now();
      assert.equal((await otherClient(url)).status, 200);
      worstHealthMs = Math.max(worstHealthMs, Date.now() - h0);
      healthMs.push(Date.now() - h0);
      peak = Math.max(peak, srv.rssBytes());
      await sleep(100);
    }
    const closed = socks.filter((s) => s.readableEnded || s.destroyed).length;
    const m = (await otherClient(url, '/metrics')).body;
    const stalledClosed = metric(m, 'scdv_socket_backpressure_total', 'action="closed"');
    const paused = metric(m, 'scdv_socket_backpressure_total', 'action="paused"');
    const figures = { answerBytes, rssBeforeMB: Math.round(before / MB), rssPeakMB: Math.round(peak / MB), worstHealthMs, stalledClosed, paused, closed, healthMs };
    report(t, 'pipelining-without-reading', figures);
    // 10,000 answers of answerBytes each would be hundreds of MB. Each socket sent more than server.maxPipelined (64)
    // requests at once: it is closed, and the requests it sent that were parsed are never handled.
    assert.ok(peak - before < 100 * MB, JSON.stringify(figures));
    assert.ok(worstHealthMs < 5000, JSON.stringify(figures));
    assert.equal(stalledClosed, 100, JSON.stringify(figures));
    assert.equal(closed, 100, JSON.stringify(figures));
  } finally {
    for (const s of socks) s.destroy();
    await srv.stop();
  }
});

test('12,000 unique related answers asked twice each: the result cache stays within server.relatedCacheBytes', async (t) => {
  const budget = 16 * MB;
  const config = h.testConfig({ relatedCacheBytes: budget });
  const srv = await serveProcess({ config, model: h.MODEL_A, redisUrl, dir: h.tmp });
  try {
    const before = srv.rssBytes();
    const unique = 1500;
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < 2 * unique; i = next++) {
        const r = await fetch(`${srv.url}/v1/collections/articles/documents/${DOC}/related?k=1000&duplicate_threshold=${(0.5 + (i % unique) * 1e-5).toFixed(5)}`);
        assert.equal(r.status, 200);
        await r.arrayBuffer();
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    const after = srv.rssBytes();
    const m = await (await fetch(`${srv.url}/metrics`)).text();
    const cacheBytes = Number(/^scdv_related_cache_bytes (\d+)/m.exec(m)?.[1]);
    const entries = Number(/^scdv_related_cache_entries (\d+)/m.exec(m)?.[1]);
    const figures = { unique, rssBeforeMB: Math.round(before / MB), rssAfterMB: Math.round(after / MB), cacheMB: +(cacheBytes / MB).toFixed(1), entries };
    report(t, 'related-cache-bytes', figures);
    assert.ok(cacheBytes > budget / 2 && cacheBytes <= budget, JSON.stringify(figures));
    assert.ok(after - before < budget + 60 * MB, JSON.stringify(figures));
  } finally {
    await srv.stop();
  }
});
