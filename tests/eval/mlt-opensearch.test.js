// OpenSearch's own more_like_this for `scdv eval` (pipeline/store/opensearch/mlt.js) without a cluster: when to
// run it, and a cluster that cannot be reached is a clear error naming the nodes (the row itself is tested
// against a real node in tests/opensearch/mlt-eval.test.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../pipeline/config.js';
import { mltOpenSearch } from '../../pipeline/store/opensearch/mlt.js';
import { wantsOpenSearchMlt } from '../../pipeline/eval/evaluate.js';

test('the OpenSearch row: --mlt opensearch always, --mlt python never, by default when store.backend is opensearch', () => {
  const native = loadConfig();
  const cluster = loadConfig({ overrides: { store: { backend: 'opensearch' } } });
  const ask = (/** @type {any} */ config, /** @type {any} */ mlt) => wantsOpenSearchMlt({ model: 'm', corpus: 'c', labelField: 'l', config, mlt });
  assert.equal(ask(native, undefined), false);
  assert.equal(ask(cluster, undefined), true);
  assert.equal(ask(native, 'opensearch'), true);
  assert.equal(ask(cluster, 'python'), false);
});

test('a cluster that cannot be reached: SCDV_BACKEND_UNAVAILABLE naming the node, no index left half made', async () => {
  const o = loadConfig({ overrides: { store: { opensearch: { nodes: ['http://127.0.0.1:1'], maxRetries: 0, requestTimeoutMs: 2000 } } } }).store.opensearch;
  await assert.rejects(mltOpenSearch([['a', 'b'], ['b', 'c']], { k: 10, opensearch: o }), (err) => {
    const e = /** @type {any} */ (err);
    assert.equal(e.code, 'SCDV_BACKEND_UNAVAILABLE');
    assert.match(e.message, /127\.0\.0\.1:1/);
    return true;
  });
});
