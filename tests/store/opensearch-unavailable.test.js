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

test('a node-to-node failure reported by the cluster is temporary: 503 SCDV_BACKEND_UNAVAILABLE, not 502', async () => {
  const { errors: osErrors } = await import('@opensearch-project/opensearch');
  const { toStoreError } = await import('../../pipeline/store/opensearch/connection.js');
  const ctx = { nodes: ['http://a:9200'], what: 'search', model: 'm', collection: 'c' };
  for (const type of ['node_not_connected_exception', 'connect_transport_exception']) {
    const err = new osErrors.ResponseError(/** @type {any} */ ({ statusCode: 500, body: { error: { type, reason: '[n2] not connected' } }, headers: {}, meta: {}, warnings: null }));
    const mapped = /** @type {any} */ (toStoreError(err, ctx));
    assert.equal(mapped.code, 'SCDV_BACKEND_UNAVAILABLE', type);
  }
  const bad = new osErrors.ResponseError(/** @type {any} */ ({ statusCode: 400, body: { error: { type: 'parsing_exception', reason: 'bad' } }, headers: {}, meta: {}, warnings: null }));
  assert.equal(/** @type {any} */ (toStoreError(bad, ctx)).code, 'SCDV_BACKEND_REJECTED', 'a bad request stays 502');
});
