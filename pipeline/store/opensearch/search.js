// Search on OpenSearch: candidates by the agreeing-sign part of the dot product (linear `rank_feature`
// clauses, filters inside the engine), then the exact dot product of the stored float32 values, in double,
// computed here (a painless rescore over `_source` measured slower, and the zip distribution has no painless).
import { osId } from './encoding.js';

/**
 * Candidates fetched for k results. Every shard ranks its documents by the same approximate score (linear
 * rank_feature clauses use no per-shard statistics), and the coordinating node merges the shards' best, so the
 * candidates are the global best by approximate score; each extra shard adds `perShard` so that a shard's
 * share of near-ties at the cut is not lost. Measured recall: README.md ("OpenSearch backend").
 * @param {number} k
 * @param {number} shards
 * @param {{min: number, perK: number, perShard: number, max: number}} c store.opensearch.candidates
 */
export function candidateCount(k, shards, c) {
  return Math.min(c.max, Math.max(c.min, Math.ceil(c.perK * k)) + c.perShard * Math.max(0, shards - 1));
}

/**
 * The engine-side filters of the search options (validate.js's NativeSearchOptions).
 * @param {import('../native.js').NativeSearchOptions} o
 */
export function filtersOf(o) {
  /** @type {object[]} */
  const filter = [];
  /** @type {object[]} */
  const mustNot = [];
  if (o.since !== undefined || o.until !== undefined) {
    filter.push({ range: { published_at: { ...(o.since !== undefined ? { gte: o.since } : {}), ...(o.until !== undefined ? { lte: o.until } : {}), format: 'epoch_millis' } } });
  }
  if (o.sites) filter.push({ terms: { site: o.sites } });
  if (o.categories) filter.push({ terms: { category: o.categories } });
  if (o.excludeSites?.length) mustNot.push({ terms: { site: o.excludeSites } });
  if (o.excludeIds?.length) mustNot.push({ ids: { values: o.excludeIds.map(osId) } });
  return { filter, mustNot };
}

/**
 * The candidate query: one linear rank_feature clause per query term of the agreeing sign. At most `maxTerms`
 * terms, the largest by magnitude (a cluster refuses more than `indices.query.bool.max_clause_count`).
 * @param {Uint32Array} indices
 * @param {Float32Array} values
 * @param {import('../native.js').NativeSearchOptions} o
 * @param {number} maxTerms
 */
export function candidateQuery(indices, values, o, maxTerms) {
  let order = Array.from(indices.keys());
  if (order.length > maxTerms) order = order.sort((a, b) => Math.abs(values[b]) - Math.abs(values[a])).slice(0, maxTerms);
  const should = [];
  for (const j of order) {
    const v = values[j];
    if (v === 0) continue;
    should.push({ rank_feature: { field: `f.${v > 0 ? 'p' : 'n'}${indices[j]}`, linear: {}, boost: Math.abs(v) } });
  }
  const { filter, mustNot } = filtersOf(o);
  return { bool: { should, minimum_should_match: 1, filter, must_not: mustNot } };
}

/**
 * Exact dot product of a stored vector (`vi`, `vv`: float32 values) with the query, summed in double.
 * @param {number[]} vi increasing
 * @param {number[]} vv
 * @param {Uint32Array} qi increasing
 * @param {Float32Array} qv
 */
export function exactDot(vi, vv, qi, qv) {
  let s = 0;
  let a = 0;
  let b = 0;
  while (a < vi.length && b < qi.length) {
    const x = vi[a];
    const y = qi[b];
    if (x === y) { s += Math.fround(vv[a]) * qv[b]; a++; b++; } else if (x < y) a++; else b++;
  }
  return s;
}

/** Lucene keeps 9 significant bits of a feature value, truncated: a true agreeing part is at most this much above. */
export const FEATURE_REL_ERROR = 2 ** -7;

/**
 * Ranks hits (with `_source` id, vi, vv, meta) by exact score, best first, ties by id.
 * @param {any[]} hits
 * @param {Uint32Array} qi
 * @param {Float32Array} qv
 * @returns {import('../collection.js').SearchHit[]}
 */
export function rerank(hits, qi, qv) {
  const scored = hits.map((h) => ({ id: String(h._source.id), score: exactDot(h._source.vi, h._source.vv, qi, qv), meta: h._source.meta ?? {} }));
  return scored.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
}
