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
 * @property {number[]} hits_at_10 per scored query, in row order: relevant neighbours among the first 10 (P@10 × 10)
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
  neighbours.forEach((list, q) => { if (Array.from(list).includes(q)) throw new Error(`query ${q} is among its own neighbours`); });
  return listMetrics(labels, labels, neighbours, 1);
}

/**
 * Metrics of queries against another collection (pages against ads, `scdv eval --match`): a result is relevant
 * when it carries the query's label; R is the number of targets with that label (a query with R = 0 is skipped).
 * @param {string[]} queryLabels label of every query (row order)
 * @param {string[]} targetLabels label of every target (a neighbour row indexes this)
 * @param {ArrayLike<number>[]} neighbours per query, the target rows best first
 * @returns {RankingMetrics}
 */
export function crossRankingMetrics(queryLabels, targetLabels, neighbours) {
  if (neighbours.length !== queryLabels.length) throw new Error(`${neighbours.length} neighbour lists for ${queryLabels.length} queries`);
  return listMetrics(queryLabels, targetLabels, neighbours, 0);
}

/**
 * The one definition of P@1, P@10 and MAP@10 (the header's formulas).
 * @param {string[]} queryLabels
 * @param {string[]} targetLabels
 * @param {ArrayLike<number>[]} neighbours
 * @param {number} self 1 when each query is also a target with its own label (not relevant to itself), else 0
 * @returns {RankingMetrics}
 */
function listMetrics(queryLabels, targetLabels, neighbours, self) {
  /** @type {Map<string, number>} */
  const perLabel = new Map();
  for (const l of targetLabels) perLabel.set(l, (perLabel.get(l) ?? 0) + 1);
  let n = 0;
  let p1 = 0;
  let p10 = 0;
  let ap10 = 0;
  /** @type {number[]} */
  const hits10 = [];
  for (let q = 0; q < queryLabels.length; q++) {
    const R = (perLabel.get(queryLabels[q]) ?? 0) - self;
    if (R <= 0) continue;
    const rel = Array.from(neighbours[q], (d) => targetLabels[d] === queryLabels[q]);
    n++;
    p1 += precisionAt(rel, 1);
    const p = precisionAt(rel, 10);
    p10 += p;
    hits10.push(Math.round(p * 10));
    ap10 += averagePrecisionAt(rel, 10, R);
  }
  return { queries: n, p_at_1: n ? p1 / n : 0, p_at_10: n ? p10 / n : 0, map_at_10: n ? ap10 / n : 0, hits_at_10: hits10 };
}

/**
 * @param {number[]} latenciesMs latencies in milliseconds
 * @returns {{mean_ms: number, median_ms: number, p95_ms: number}}
 */
export function latencySummary(latenciesMs) {
  if (!latenciesMs.length) return { mean_ms: 0, median_ms: 0, p95_ms: 0 };
  const s = [...latenciesMs].sort((a, b) => a - b);
  const q = (/** @type {number} */ f) => s[Math.min(s.length - 1, Math.floor(f * s.length))];
  const median = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return { mean_ms: s.reduce((a, b) => a + b, 0) / s.length, median_ms: median, p95_ms: q(0.95) };
}

/** The bootstrap of every verdict (the report's on P@10, `--classify`'s on accuracy): fixed, so that the same figures always give the same interval. */
export const BOOTSTRAP = Object.freeze({ resamples: 2000, confidence: 0.95, seed: 1 });

/**
 * The word for a paired interval of "a − b": better or worse when it lies wholly above or below 0, tied when it holds 0.
 * @param {{low: number, high: number}} interval
 * @returns {'better'|'tied'|'worse'}
 */
export function intervalWord(interval) {
  return interval.low > 0 ? 'better' : interval.high < 0 ? 'worse' : 'tied';
}

/**
 * Paired bootstrap over queries: the difference of the means of `a` and `b` (figures of two methods on the same
 * queries, in the same order) with a percentile confidence interval. Queries are resampled with replacement, the
 * same draw for both methods; the generator is seeded so a report shows the same interval every time it is written.
 * @param {ArrayLike<number>} a
 * @param {ArrayLike<number>} b
 * @param {{resamples?: number, confidence?: number, seed?: number}} [opts] 2000 resamples, 95 %
 * @returns {{diff: number, low: number, high: number, resamples: number, confidence: number}}
 */
export function pairedBootstrap(a, b, opts = {}) {
  if (a.length !== b.length) throw new Error(`paired bootstrap of ${a.length} and ${b.length} figures: they must pair up query by query`);
  const n = a.length;
  if (n === 0) throw new Error('paired bootstrap of no queries');
  const resamples = opts.resamples ?? 2000;
  const confidence = opts.confidence ?? 0.95;
  const d = Float64Array.from({ length: n }, (_, i) => a[i] - b[i]);
  const diff = d.reduce((x, y) => x + y, 0) / n;
  const random = mulberry32(opts.seed ?? 1);
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += d[Math.floor(random() * n)];
    means[r] = sum / n;
  }
  means.sort();
  const tail = (1 - confidence) / 2;
  const at = (/** @type {number} */ q) => means[Math.min(resamples - 1, Math.max(0, Math.floor(q * resamples)))];
  return { diff, low: at(tail), high: at(1 - tail), resamples, confidence };
}

/**
 * A small seeded generator of uniform numbers in [0, 1) (mulberry32).
 * @param {number} seed
 */
function mulberry32(seed) {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let x = Math.imul(t ^ (t >>> 15), 1 | t);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
