// Flags of `scdv inspect clusters`: degenerate (empty, tiny, catch-all, diffuse) and incoherent clusters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judgeClusters, sortClusters, formatClusters, FLAG_THRESHOLDS } from '../../pipeline/inspect/clusters.js';

/** @param {Partial<Record<string, any>>} c @param {number} k */
const cluster = (k, c) => ({
  cluster: k, weight: 0.1, size: 100, soft_size: 100, mean_member_posterior: 0.95, coherence: 0.3, coherence_pairs: 45,
  top_words: [{ word: `w${k}`, score: 1, p: 0.9, idf: 2, count: 10 }], ...c,
});

/** 10 clusters over 1000 words: mean size 100. */
function analysis(/** @type {Record<number, Partial<Record<string, any>>>} */ overrides) {
  return {
    n_words: 1000, n_clusters: 10, top: 10, corpus: { documents: 50 }, coherence: { mean: 0.1 },
    gmm: { covariance_type: 'tied', n_iter: 12, converged: true, loglik_history: [] },
    clusters: Array.from({ length: 10 }, (_, k) => cluster(k, overrides[k] ?? {})),
  };
}

test('degenerate and incoherent clusters are flagged, healthy ones are not', () => {
  const a = analysis({
    1: { size: 0, soft_size: 0.4, mean_member_posterior: null, coherence: null },
    2: { size: 5 }, // < 0.2 x mean (20)
    3: { size: 400 }, // > 3 x mean (300)
    4: { coherence: -0.8 },
    5: { mean_member_posterior: 0.4 },
    6: { size: 25, coherence: -0.5 }, // at the thresholds' edges: not flagged
  });
  const flags = Object.fromEntries(judgeClusters(a).map((c) => [c.cluster, c.flags]));
  assert.deepEqual(flags[0], []);
  assert.deepEqual(flags[1], ['empty']);
  assert.deepEqual(flags[2], ['tiny']);
  assert.deepEqual(flags[3], ['catch-all']);
  assert.deepEqual(flags[4], ['incoherent']);
  assert.deepEqual(flags[5], ['diffuse']);
  assert.deepEqual(flags[6], []);
  // thresholds can be changed per call
  assert.deepEqual(judgeClusters(a, { minCoherence: 0.5 })[0].flags, ['incoherent']);
  assert.equal(FLAG_THRESHOLDS.minCoherence, -0.5);
});

test('a tiny cluster needs at least 2 words even when the mean size is small', () => {
  const a = { ...analysis({}), n_words: 30 }; // mean size 3: 0.2 x 3 < 2
  a.clusters[0].size = 1;
  a.clusters[1].size = 2;
  const j = judgeClusters(a);
  assert.deepEqual(j[0].flags, ['tiny']);
  assert.deepEqual(j[1].flags.includes('tiny'), false);
});

test('sorting and the text table', () => {
  const a = analysis({ 4: { coherence: -0.8 }, 7: { coherence: null }, 2: { size: 5 } });
  const byCoherence = sortClusters(judgeClusters(a), 'coherence');
  assert.equal(byCoherence[0].cluster, 4);
  assert.equal(byCoherence.at(-1)?.cluster, 7, 'clusters without coherence come last');
  assert.equal(sortClusters(judgeClusters(a), 'size').at(-1)?.cluster, 2);
  const text = formatClusters(a, byCoherence, { modelName: 'm' });
  assert.match(text, /model m: 10 clusters over 1000 words/);
  assert.match(text, /\n {3}4 +100 +0\.100 +-0\.80 +incoherent +w4\n/);
  assert.match(text, /flagged: 2 of 10/);
  // --flagged shows the flagged rows only: the count is still out of every cluster
  const onlyFlagged = formatClusters(a, byCoherence.filter((r) => r.flags.length), { modelName: 'm' });
  assert.match(onlyFlagged, /flagged: 2 of 10 \(2 shown\)/);
});
