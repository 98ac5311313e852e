// Which topics and words carry a document vector, and why two vectors match. Pure decompositions of the
// vectors pipeline/embed/ computes (it is the one implementation of the vector; nothing here builds one).
//
// Every SCDV dimension belongs to one cluster: dim = k·d + j (cluster k, word-vector dimension j). So
//   · a unit vector's squared norm splits over clusters: Σ_k Σ_{dims of k} v² = 1 (the topic mass);
//   · a dot product splits over clusters: a·b = Σ_k Σ_{dims of k} a_i b_i (the shared topics).
// Words: the embedder keeps the largest entries of acc = Σ_w damp(tf_w)·wtv(w) and divides them by their
// norm N, so for any vector t
//   v·t = Σ_w c_w(t),   c_w(t) = damp(tf_w) · Σ_{i kept in v} wtv_w[i] · t_i / N,
// and N itself is Σ_w damp(tf_w)·Σ_{i kept} wtv_w[i]·v_i (take t = v: v·v = 1). Contributions can be
// negative (a word pulling the vector away from t).
import { damp } from '../embed/vectorizer.js';

/** Pseudo-cluster of the lexical (TF-IDF) block of the hybrid layout (embed.hybrid.alpha < 1). */
export const LEXICAL = -1;

/** @typedef {{indices: ArrayLike<number>, values: ArrayLike<number>}} Sparse */

/**
 * @typedef {object} WordContribution
 * @property {string} word
 * @property {number} tf occurrences in the document
 * @property {number} contribution c_w(t): the word's part of v·t
 * @property {Map<number, number>} byCluster the same, split over clusters (sums to contribution)
 */

/**
 * Share of the vector's squared norm in each cluster, largest first.
 * @param {Sparse} vector
 * @param {number} dim word-vector dimensions d
 * @param {number} [scdvWidth] K·d: dims at or above it are the lexical block of the hybrid layout (cluster -1)
 * @returns {{cluster: number, mass: number}[]}
 */
export function topicMass(vector, dim, scdvWidth = Infinity) {
  /** @type {Map<number, number>} */
  const mass = new Map();
  for (let i = 0; i < vector.indices.length; i++) {
    const k = vector.indices[i] >= scdvWidth ? LEXICAL : Math.floor(vector.indices[i] / dim);
    mass.set(k, (mass.get(k) ?? 0) + vector.values[i] * vector.values[i]);
  }
  return [...mass].map(([cluster, m]) => ({ cluster, mass: m })).sort((a, b) => b.mass - a.mass || a.cluster - b.cluster);
}

/**
 * The dot product of two sparse vectors (increasing indices) split over clusters, largest first.
 * @param {Sparse} a
 * @param {Sparse} b
 * @param {number} dim
 * @param {number} [scdvWidth] as for topicMass
 * @returns {{score: number, topics: {cluster: number, contribution: number}[]}}
 */
export function dotByTopic(a, b, dim, scdvWidth = Infinity) {
  /** @type {Map<number, number>} */
  const by = new Map();
  let score = 0;
  let i = 0;
  let j = 0;
  while (i < a.indices.length && j < b.indices.length) {
    const x = a.indices[i];
    const y = b.indices[j];
    if (x === y) {
      const p = a.values[i] * b.values[j];
      score += p;
      const k = x >= scdvWidth ? LEXICAL : Math.floor(x / dim);
      by.set(k, (by.get(k) ?? 0) + p);
      i++; j++;
    } else if (x < y) i++; else j++;
  }
  const topics = [...by].map(([cluster, contribution]) => ({ cluster, contribution }))
    .sort((p, q) => q.contribution - p.contribution || p.cluster - q.cluster);
  return { score, topics };
}

/** @param {Sparse} v */
function toMap(v) {
  /** @type {Map<number, number>} */
  const m = new Map();
  for (let i = 0; i < v.indices.length; i++) m.set(v.indices[i], v.values[i]);
  return m;
}

/**
 * Each distinct known word's contribution to v·t, where v is the embedding of `tokens` (as computed by
 * pipeline/embed/ with the same settings) and t any vector (v itself: the word's share of the vector).
 * @param {string[]} tokens the document's tokens, as the embedder saw them
 * @param {Sparse} vector the document's embedding
 * @param {{lookup: (w: string) => Sparse | null, dim: number}} wordTopics
 * @param {import('../config.js').Config['embed']} cfg the embed settings v was computed with
 * @param {Sparse} [target] default: v
 * @returns {{words: WordContribution[], unknown: string[], total: number}} words by contribution, largest first;
 *   total = Σ contributions (= v·t up to float32 rounding)
 */
export function wordContributions(tokens, vector, wordTopics, cfg, target) {
  /** @type {Map<string, number>} */
  const tf = new Map();
  for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
  const vm = toMap(vector);
  const tm = target ? toMap(target) : vm;
  const { dim } = wordTopics;
  /** @type {{word: string, tf: number, self: number, raw: number, byCluster: Map<number, number>}[]} */
  const rows = [];
  /** @type {string[]} */
  const unknown = [];
  let norm = 0;
  for (const [word, count] of tf) {
    const row = wordTopics.lookup(word);
    if (!row) { unknown.push(word); continue; }
    const w = damp(count, cfg);
    let self = 0;
    let raw = 0;
    /** @type {Map<number, number>} */
    const byCluster = new Map();
    for (let i = 0; i < row.indices.length; i++) {
      const d = row.indices[i];
      const vi = vm.get(d);
      if (vi === undefined) continue; // dropped when the document vector was sparsified
      self += w * row.values[i] * vi;
      const ti = tm.get(d);
      if (ti === undefined) continue;
      const p = w * row.values[i] * ti;
      raw += p;
      const k = Math.floor(d / dim);
      byCluster.set(k, (byCluster.get(k) ?? 0) + p);
    }
    norm += self;
    rows.push({ word, tf: count, self, raw, byCluster });
  }
  const scale = norm > 0 ? 1 / norm : 0;
  const words = rows.map((r) => {
    for (const [k, c] of r.byCluster) r.byCluster.set(k, c * scale);
    return { word: r.word, tf: r.tf, contribution: r.raw * scale, byCluster: r.byCluster };
  }).sort((a, b) => b.contribution - a.contribution || (a.word < b.word ? -1 : 1));
  return { words, unknown, total: words.reduce((s, w) => s + w.contribution, 0) };
}

/**
 * The words of a contribution list that carry cluster k, largest first.
 * @param {WordContribution[]} words
 * @param {number} cluster
 * @param {number} count
 */
export function wordsOfCluster(words, cluster, count) {
  return words.map((w) => ({ word: w.word, contribution: w.byCluster.get(cluster) ?? 0 }))
    .filter((w) => w.contribution !== 0)
    .sort((a, b) => b.contribution - a.contribution || (a.word < b.word ? -1 : 1))
    .slice(0, count);
}
