// Judging the clusters of an analysis: flags for incoherent and degenerate clusters, and their text table.

/**
 * Thresholds of the flags. Coherence is the mean NPMI of a cluster's top-word pairs, in [-1, 1]: 0 means the
 * words co-occur in documents as often as independent words would, -1 that no pair ever shares a document.
 */
export const FLAG_THRESHOLDS = Object.freeze({
  /** `incoherent`: mean NPMI below this (most top-word pairs never share a document). */
  minCoherence: -0.5,
  /** `empty`: no word has this cluster as its most probable one. `tiny`: fewer words than this share of the mean size (and at least 2). */
  tinyShareOfMean: 0.2,
  /** `catch-all`: more words than this multiple of the mean cluster size (a dump of unrelated words). */
  catchAllMultipleOfMean: 3,
  /** `diffuse`: its words' mean P(k|w) is below this (the cluster overlaps others). */
  minMemberPosterior: 0.6,
});

/** @typedef {'incoherent'|'empty'|'tiny'|'catch-all'|'diffuse'} ClusterFlag */

/**
 * @typedef {object} JudgedCluster
 * @property {number} cluster
 * @property {number} size words whose most probable cluster this is
 * @property {number} softSize Σ_w P(k|w)
 * @property {number} weight mixture weight
 * @property {number|null} meanMemberPosterior
 * @property {number|null} coherence mean NPMI of top-word pairs (null: no corpus, or no scorable pair)
 * @property {number|null} coherencePairs
 * @property {{word: string, score: number, p: number, idf: number, count: number, df?: number}[]} topWords by P(k|w)·idf
 * @property {ClusterFlag[]} flags
 */

/**
 * @param {Record<string, any>} analysis
 * @param {Partial<Record<keyof typeof FLAG_THRESHOLDS, number>>} [thresholds]
 * @returns {JudgedCluster[]}
 */
export function judgeClusters(analysis, thresholds = {}) {
  const t = { ...FLAG_THRESHOLDS, ...thresholds };
  const clusters = /** @type {any[]} */ (analysis.clusters);
  const meanSize = analysis.n_words / Math.max(1, clusters.length);
  return clusters.map((c) => {
    /** @type {ClusterFlag[]} */
    const flags = [];
    if (c.coherence != null && c.coherence < t.minCoherence) flags.push('incoherent');
    if (c.size === 0) flags.push('empty');
    else if (c.size < Math.max(2, t.tinyShareOfMean * meanSize)) flags.push('tiny');
    if (clusters.length > 1 && c.size > t.catchAllMultipleOfMean * meanSize) flags.push('catch-all');
    if (c.size > 0 && c.mean_member_posterior != null && c.mean_member_posterior < t.minMemberPosterior) flags.push('diffuse');
    return {
      cluster: c.cluster, size: c.size, softSize: c.soft_size, weight: c.weight,
      meanMemberPosterior: c.mean_member_posterior ?? null, coherence: c.coherence ?? null,
      coherencePairs: c.coherence_pairs ?? null, topWords: c.top_words, flags,
    };
  });
}

/**
 * @param {JudgedCluster[]} rows
 * @param {'cluster'|'coherence'|'size'} by
 */
export function sortClusters(rows, by) {
  const key = {
    cluster: (/** @type {JudgedCluster} */ r) => r.cluster,
    coherence: (/** @type {JudgedCluster} */ r) => (r.coherence == null ? Infinity : r.coherence),
    size: (/** @type {JudgedCluster} */ r) => -r.size,
  }[by];
  return [...rows].sort((a, b) => key(a) - key(b) || a.cluster - b.cluster);
}

/** @param {number|null|undefined} v @param {number} [digits] */
const num = (v, digits = 2) => (v == null || Number.isNaN(v) ? '-' : v.toFixed(digits));

/**
 * The readable table of `scdv inspect clusters`.
 * @param {Record<string, any>} analysis
 * @param {JudgedCluster[]} rows
 * @param {{words?: number, modelName?: string}} [opts]
 */
export function formatClusters(analysis, rows, opts = {}) {
  const nWords = opts.words ?? 8;
  // Counted over every cluster of the model: rows may be a selection (--flagged, --cluster).
  const flagged = judgeClusters(analysis).filter((r) => r.flags.length).length;
  const lines = [
    `model ${opts.modelName ?? ''}: ${analysis.n_clusters} clusters over ${analysis.n_words} words (${analysis.gmm.covariance_type} covariance, ` +
      `EM ${analysis.gmm.n_iter} iterations, ${analysis.gmm.converged ? 'converged' : 'NOT converged'})`,
    analysis.corpus
      ? `coherence: mean NPMI of each cluster's top ${analysis.top} words over ${analysis.corpus.documents} documents; model mean ${num(analysis.coherence.mean, 3)}`
      : 'coherence: not computed (no tokenised corpus: pass --corpus FILE, the corpus the model was trained on)',
    `flagged: ${flagged} of ${analysis.n_clusters}${rows.length < analysis.n_clusters ? ` (${rows.length} shown)` : ''} (incoherent: NPMI < ${FLAG_THRESHOLDS.minCoherence}; tiny/empty/catch-all: size against the mean of ${num(analysis.n_words / analysis.n_clusters, 1)} words)`,
    '',
    `${'k'.padStart(4)} ${'size'.padStart(5)} ${'weight'.padStart(6)} ${'NPMI'.padStart(6)}  ${'flags'.padEnd(20)} top words by P(k|w)·idf`,
  ];
  for (const r of rows) {
    lines.push(`${String(r.cluster).padStart(4)} ${String(r.size).padStart(5)} ${num(r.weight, 3).padStart(6)} ${num(r.coherence).padStart(6)}  ` +
      `${(r.flags.join(',') || '-').padEnd(20)} ${r.topWords.slice(0, nWords).map((w) => w.word).join(' ')}`);
  }
  return lines.join('\n') + '\n';
}
