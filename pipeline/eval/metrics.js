// Relevance metrics of `scdv eval`: every document is a query, its neighbours (itself excluded) are relevant
// when they carry the query's label. One implementation, used for SCDV and for the baselines alike.
//
//   precision@k  = |relevant among the first k neighbours| / k   (k in the denominator even when fewer came back)
//   AP@k         = (1 / min(R, k)) · Σ_{i ≤ k, neighbour i relevant} precision@i,
//                  R = the other documents with the query's label (a query with R = 0 is skipped)
//   MAP@k        = the mean of AP@k over the queries

/**
 * @typedef {object} RankingMetrics
 * @property {number} queries scored queries (documents whose label has at least one other document)
 * @property {number} p_at_1
 * @property {number} p_at_10
 * @property {number} map_at_10
 */

/**
 * @param {boolean[]} rel relevance of the neighbours, best first
 * @param {number} k
 */
export function precisionAt(rel, k) {
  let hits = 0;
  for (let i = 0; i < Math.min(k, rel.length); i++) if (rel[i]) hits++;
  return hits / k;
}

/**
 * @param {boolean[]} rel relevance of the neighbours, best first
 * @param {number} k
 * @param {number} relevantTotal R: relevant documents in the collection
 */
export function averagePrecisionAt(rel, k, relevantTotal) {
  if (relevantTotal <= 0) return 0;
  let hits = 0;
  let sum = 0;
  for (let i = 0; i < Math.min(k, rel.length); i++) {
    if (rel[i]) { hits++; sum += hits / (i + 1); }
  }
  return sum / Math.min(relevantTotal, k);
}

/**
 * Metrics of a whole run.
 * @param {string[]} labels label of every document (row number = document number)
 * @param {ArrayLike<number>[]} neighbours per query row, the neighbour rows best first (the query itself must not be among them)
 * @returns {RankingMetrics}
 */
export function rankingMetrics(labels, neighbours) {
  if (neighbours.length !== labels.length) throw new Error(`${neighbours.length} neighbour lists for ${labels.length} documents`);
  /** @type {Map<string, number>} */
  const perLabel = new Map();
  for (const l of labels) perLabel.set(l, (perLabel.get(l) ?? 0) + 1);
  let n = 0;
  let p1 = 0;
  let p10 = 0;
  let ap10 = 0;
  for (let q = 0; q < labels.length; q++) {
    const R = /** @type {number} */ (perLabel.get(labels[q])) - 1;
    if (R <= 0) continue;
    const rel = Array.from(neighbours[q], (d) => {
      if (d === q) throw new Error(`query ${q} is among its own neighbours`);
      return labels[d] === labels[q];
    });
    n++;
    p1 += precisionAt(rel, 1);
    p10 += precisionAt(rel, 10);
    ap10 += averagePrecisionAt(rel, 10, R);
  }
  return { queries: n, p_at_1: n ? p1 / n : 0, p_at_10: n ? p10 / n : 0, map_at_10: n ? ap10 / n : 0 };
}

/**
 * @param {number[]} ms latencies in milliseconds
 * @returns {{mean_ms: number, median_ms: number, p95_ms: number}}
 */
export function latencySummary(ms) {
  if (!ms.length) return { mean_ms: 0, median_ms: 0, p95_ms: 0 };
  const s = [...ms].sort((a, b) => a - b);
  const q = (/** @type {number} */ f) => s[Math.min(s.length - 1, Math.floor(f * s.length))];
  const median = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return { mean_ms: s.reduce((a, b) => a + b, 0) / s.length, median_ms: median, p95_ms: q(0.95) };
}
