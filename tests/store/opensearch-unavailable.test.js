// The OpenSearch backend when no cluster answers: every call fails with SCDV_BACKEND_UNAVAILABLE (503: the
// server's routes answer it, /readyz reports it), naming the nodes tried and the cause; health() says not ok;
// nothing hangs past the configured timeout. No cluster is needed: the port is closed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { loadConfig } from '../../pipeline/config.js';
import { openModelStore } from '../../pipeline/store/index.js';

/** A local port nothing listens on. */
async function closedPort() {
  const srv = net.createServer();
  await new Promise((res) => srv.listen(0, '127.0.0.1', () => res(null)));
  const port = /** @type {net.AddressInfo} */ (srv.address()).port;
  await new Promise((res) => srv.close(res));
  return port;
}

test('OpenSearch unreachable: SCDV_BACKEND_UNAVAILABLE (503) naming the nodes, health not ok, no hang', async () => {
  const node = `http://127.0.0.1:${await closedPort()}`;
  const config = loadConfig({ overrides: { store: { backend: 'opensearch', opensearch: { nodes: [node], maxRetries: 1, requestTimeoutMs: 2000 } } } });
  const store = await openModelStore('m1', config);
  try {
    assert.equal(store.backend, 'opensearch');
    const t0 = Date.now();
    for (const call of [async () => store.collection('articles'), async () => store.listCollections(), async () => store.collectionInfo('articles')]) {
      await assert.rejects(call, (err) => {
        const e = /** @type {any} */ (err);
        assert.equal(e.code, 'SCDV_BACKEND_UNAVAILABLE');
        assert.equal(e.status, 503);
        assert.ok(e.message.includes(node), e.message);
        assert.match(e.message, /ConnectionError/);
        return true;
      });
    }
    assert.ok(Date.now() - t0 < 10_000, 'fails fast on a refused connection');
    const health = await store.health();
    assert.equal(health.ok, false);
    assert.equal(health.backend, 'opensearch');
    assert.match(String(health.detail), /unavailable/);
  } finally {
    await store.close();
  }
});
