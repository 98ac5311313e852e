// Per-connection bounds (server/sockets.js): pipelined requests are handled one at a time; a client that does not read
// its answers gets no further one handled once its socket has more than server.socketBufferBytes unwritten, and is
// closed when those bytes do not go down for server.socketStallMs; a pipelining client that reads gets every answer in order.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';

const h = await import('./helpers.js');
const { startServer } = await import('../../server/start.js');
const { DEFAULT_CONFIG } = await import('../../pipeline/config.js');

/** @type {string} */
let redisUrl;
before(async () => { ({ redis: { url: redisUrl } } = await h.setup()); });
after(async () => { await h.teardown(); });

const { sleep, waitFor } = await import('../lib/wait.js');

test('the defaults of the per-connection bounds', () => {
  const s = DEFAULT_CONFIG.server;
  assert.deepEqual([s.maxConnectionsPerClient, s.socketBufferBytes, s.socketStallMs, s.maxPipelined], [256, 512 << 10, 10_000, 64]);
});

/** @param {{socketStallMs?: number}} [server] */
async function serverWithBigAnswers(server = {}) {
  const state = { handled: 0, inFlight: 0, maxInFlight: 0 };
  const srv = await startServer({
    config: h.testConfig(server), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0,
    configure: (app) => {
      app.get('/test/big', async (_q, reply) => {
        state.handled++;
        state.inFlight++;
        state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
        await sleep(5);
        state.inFlight--;
        return reply.type('application/octet-stream').send(Buffer.alloc(1 << 20, 120));
      });
    },
  });
  return { srv, state, port: Number(new URL(srv.url).port) };
}

test('a client pipelining 40 requests for 1 MB answers without reading: a few are handled, then none, then the socket is closed', async () => {
  const { srv, state, port } = await serverWithBigAnswers({ socketStallMs: 600 });
  try {
    const s = net.connect({ host: '127.0.0.1', port });
    await new Promise((r) => s.once('connect', r));
    s.on('error', () => {});
    s.pause();
    s.write('GET /test/big HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(40));
    let closed = false;
    s.once('close', () => { closed = true; });
    await waitFor(() => state.handled >= 1, { timeoutMs: 20_000, what: 'the first pipelined request to be handled' });
    // Time for a server without the bound to go on handling the pipelined requests.
    await sleep(400);
    const handledWhileStalled = state.handled;
    // What the kernel's buffers take on loopback (a few MB) plus the bound: far fewer than the 40 asked for.
    assert.ok(handledWhileStalled >= 1 && handledWhileStalled <= 16, `${handledWhileStalled} handled`);
    assert.equal(state.maxInFlight, 1, 'one request at a time on a connection');
    let m = '';
    await waitFor(async () => {
      m = await (await fetch(`${srv.url}/metrics`)).text();
      return /scdv_socket_backpressure_total\{action="closed"\} 1\b/.test(m);
    }, { timeoutMs: 20_000, everyMs: 100, what: 'the stalled socket to be closed (scdv_socket_backpressure_total{action="closed"})' });
    assert.match(m, /scdv_socket_backpressure_total\{action="paused"\} 1\b/);
    assert.match(m, /scdv_socket_backpressure_total\{action="closed"\} 1\b/);
    // The client sees the connection end once it reads what was written.
    s.resume();
    await waitFor(() => closed, { timeoutMs: 20_000, what: 'the client to see the connection end' });
    assert.equal(state.handled, handledWhileStalled, 'nothing more was handled');
  } finally {
    await srv.close();
  }
});

test('a pipelining client that reads gets all its answers, in order, one handled at a time', async () => {
  let order = 0;
  const srv = await startServer({
    config: h.testConfig(), model: h.MODEL_A, redisUrl, host: '127.0.0.1', port: 0, indexWorkers: 0,
    configure: (app) => {
      app.get('/test/n/:n', async (q) => {
        const n = Number(/** @type {any} */ (q.params).n);
        await sleep(n % 3 === 0 ? 15 : 1);
        return { n, seen: order++ };
      });
    },
  });
  try {
    const s = net.connect({ host: '127.0.0.1', port: Number(new URL(srv.url).port) });
    await new Promise((r) => s.once('connect', r));
    let text = '';
    s.on('data', (d) => { text += d; });
    s.write(Array.from({ length: 30 }, (_, i) => `GET /test/n/${i} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
    await waitFor(() => (text.match(/HTTP\/1\.1 200/g) ?? []).length >= 30, { timeoutMs: 20_000, everyMs: 10, what: '30 answers', last: () => (text.match(/HTTP\/1\.1 200/g) ?? []).length });
    s.destroy();
    const bodies = [...text.matchAll(/\{"n":(\d+),"seen":(\d+)\}/g)].map((m) => [Number(m[1]), Number(m[2])]);
    assert.deepEqual(bodies, Array.from({ length: 30 }, (_, i) => [i, i]));
  } finally {
    await srv.close();
  }
});

test('the bounds\' settings are validated', async () => {
  const { loadConfig } = await import('../../pipeline/config.js');
  for (const [key, bad] of /** @type {const} */ ([['maxConnectionsPerClient', -1], ['socketBufferBytes', 0], ['socketStallMs', 0], ['maxPipelined', 1.5],
    ['relatedCacheBytes', -1], ['embedLargeTextChars', 0], ['embedLargeQueue', 0]])) {
    assert.throws(() => loadConfig({ overrides: { server: { [key]: bad } } }), new RegExp(`server\\.${key}`), key);
  }
  assert.equal(loadConfig({ overrides: { server: { maxConnectionsPerClient: 0, relatedCacheBytes: 0 } } }).server.maxConnectionsPerClient, 0);
});
