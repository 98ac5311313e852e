// The re-ranking's decisions, each made in one function of pipeline/match/rerank.js: whether feedback is on (and
// the API's default of it), whether the store's fused re-ranking answers, and what an arm's view of a collection
// declares.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  defaultFeedback, feedbackOn, feedbackSettings, fusedRerankApplies, rerankSignature, searchView,
} from '../../pipeline/match/rerank.js';
import { NO_OPTIONAL_CALLS } from '../../pipeline/store/index.js';

const plain = { duplicateThreshold: null, halfLifeMs: null, recencyWeight: 0.5, maxPerSite: null, now: 0 };
const ALL = { vectors: true, getMany: true, scores: true, leanSearch: true, fusedRerank: true, fusedRerankById: true };

test('feedback is on when docs and weight are both above 0; its settings, default and signature follow that one test', () => {
  for (const [f, on] of /** @type {[any, boolean][]} */ ([
    [{ docs: 3, weight: 1 }, true], [{ docs: 0, weight: 1 }, false], [{ docs: 3, weight: 0 }, false], [null, false], [undefined, false],
  ])) {
    assert.equal(feedbackOn(f), on, JSON.stringify(f));
    if (!f) continue;
    const cfg = { enabled: true, pool: 20, ...f };
    assert.deepEqual(feedbackSettings(cfg), on ? { docs: f.docs, weight: f.weight, pool: 20 } : null);
    assert.deepEqual(defaultFeedback(cfg), feedbackSettings(cfg));
    assert.equal(defaultFeedback({ ...cfg, enabled: false }), null, 'not by default when disabled');
    assert.equal('feedback' in rerankSignature({ ...plain, feedback: { pool: 20, ...f } }), on, 'the signature names feedback only when it is on');
  }
});

test('the fused re-ranking applies when declared and the options need no metadata during the walk and re-rank something', () => {
  const native = { capabilities: ALL };
  const collapse = { ...plain, duplicateThreshold: 0.9 };
  assert.equal(fusedRerankApplies(native, collapse), true);
  assert.equal(fusedRerankApplies(native, collapse, true), true);
  assert.equal(fusedRerankApplies(native, { ...plain, feedback: { docs: 3, weight: 1, pool: 20 } }), true);
  assert.equal(fusedRerankApplies(native, plain), false, 'nothing re-ranked: a plain search');
  assert.equal(fusedRerankApplies(native, { ...plain, feedback: { docs: 3, weight: 0, pool: 20 } }), false, 'feedback that is off');
  assert.equal(fusedRerankApplies(native, { ...collapse, halfLifeMs: 1000 }), false, 'recency');
  assert.equal(fusedRerankApplies(native, { ...collapse, maxPerSite: 2 }), false, 'a per-site cap');
  assert.equal(fusedRerankApplies({ capabilities: NO_OPTIONAL_CALLS }, collapse), false, 'not declared');
  assert.equal(fusedRerankApplies({ capabilities: { ...ALL, fusedRerankById: false } }, collapse, true), false, 'by id not declared');
});

test('an arm\'s view offers the fused calls only when it searches with the query unchanged, and always scores with its query', async () => {
  const coll = {
    capabilities: ALL,
    searchAsync: async () => [], get: () => null, vectors: () => [], scores: () => new Float64Array(0),
    searchAsyncIds: async () => [], metas: () => [], searchRerankedAsync: async () => ({ hits: [], dropped: [], searched: 0, fetched: 0 }),
    searchRerankedByIdAsync: async () => null,
  };
  const same = searchView(coll, (v) => v, true);
  assert.deepEqual(same.capabilities, ALL);
  assert.equal(typeof same.searchRerankedAsync, 'function');
  const part = searchView(coll, (v) => ({ indices: v.indices.slice(0, 1), values: v.values.slice(0, 1) }), false);
  assert.deepEqual(part.capabilities, { ...ALL, fusedRerank: false, fusedRerankById: false });
  assert.equal(part.searchRerankedAsync, undefined);
  assert.equal(fusedRerankApplies(part, { ...plain, duplicateThreshold: 0.9 }), false);
  const bare = searchView({ capabilities: NO_OPTIONAL_CALLS, searchAsync: async () => [], get: () => null }, (v) => v, true);
  assert.deepEqual(bare.capabilities, { ...NO_OPTIONAL_CALLS, scores: true }, 'scores through get, with the view\'s query');
  const empty = searchView(coll, () => ({ indices: new Uint32Array(0), values: new Float32Array(0) }), false);
  assert.deepEqual(await empty.searchAsync({ indices: Uint32Array.of(1), values: Float32Array.of(1) }, {}), [], 'an empty derived query finds nothing');
});
