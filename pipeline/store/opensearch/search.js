// Search on OpenSearch, in one request per round: candidates by the agreeing-sign part of the dot product
// (boosted `term` clauses on the feature field, whose similarity multiplies by the term's weight: encoding.js;
// filters inside the engine), then an exact re-ranking in the engine (a Painless
// `rescore` script reading each candidate's doc value `v`, encoding.js), and the exact score of each returned hit
// (the same script as a script field, in double: a Lucene score is a float32). No vector leaves the engine.
// 'fast' asks only for the query's terms that fit a postings budget (candidateTerms: the budget grows with the
// collection); 'exact' asks for every agreeing term and proves its top k (collection.js).
import { encodeVector, osId } from './encoding.js';

/**
 * The exact dot product of the document's doc value `v` with the query (`params.q`: encodeVector's base64 of its
 * int32 indices, increasing, then its float32 values, the layout of `v` itself), in double, in increasing index
 * order (the native store's order and precision: float32 times float32 is exact).
 * The query is decoded once per segment, not per document: the first document a script instance scores puts the
 * query as a dense float[] by feature index into `params` under `_w`; the engine gives each segment's script
 * instance its own copy of the request's params (ScoreScript and FieldScript copy them per leaf), and the params
 * are the request's own: whatever instance finds `_w` finds this search's query. A document's terms are then
 * looked up there in the order it stores them (increasing index): the same products added in the same order as a
 * merge of the two sorted lists. (A merge of the document's indices against the query's as primitive arrays was
 * slower than this lookup: its branches cost more.) The array takes 4 bytes a feature of the model's width for
 * each segment a search re-ranks or scores hits in. The query travels as one base64 string rather than two JSON
 * lists of numbers: the request is ~40 % smaller (~12 instead of ~21 KB for a 285-term query, sent twice: for the
 * rescore and for the script field), which took ~0.2 ms off a search's round trip on 100k documents.
 * `SCORE` below maps it onto the positive scores Lucene requires, keeping its order.
 */
const DOT = `def c = params['_w']; float[] w;
if (c == null) {
  byte[] qb = Base64.getDecoder().decode((String) params.q); int m = qb.length >> 3; int vq = m << 2;
  int last = -1;
  if (m != 0) { int p = vq - 4; last = (qb[p] & 255) | ((qb[p + 1] & 255) << 8) | ((qb[p + 2] & 255) << 16) | ((qb[p + 3] & 255) << 24); }
  w = new float[last + 1];
  for (int j = 0; j < m; j++) {
    int p = j << 2; int r = vq + p;
    w[(qb[p] & 255) | ((qb[p + 1] & 255) << 8) | ((qb[p + 2] & 255) << 16) | ((qb[p + 3] & 255) << 24)] =
      Float.intBitsToFloat((qb[r] & 255) | ((qb[r + 1] & 255) << 8) | ((qb[r + 2] & 255) << 16) | ((qb[r + 3] & 255) << 24));
  }
  params['_w'] = w;
} else { w = (float[]) c; }
def d = doc['v']; double s = 0;
if (d.size() != 0) {
  BytesRef b = d.value; byte[] a = b.bytes; int o = b.offset; int n = b.length >> 3; int vo = o + (n << 2); int wl = w.length;
  for (int i = 0; i < n; i++) {
    int p = o + (i << 2);
    int x = (a[p] & 255) | ((a[p + 1] & 255) << 8) | ((a[p + 2] & 255) << 16) | ((a[p + 3] & 255) << 24);
    if (x >= wl) { break; }
    float q = w[x];
    if (q != 0) {
      int r = vo + (i << 2);
      s += (double) Float.intBitsToFloat((a[r] & 255) | ((a[r + 1] & 255) << 8) | ((a[r + 2] & 255) << 16) | ((a[r + 3] & 255) << 24)) * (double) q;
    }
  }
}`;
/** Rescore script: s ≥ 0 -> 1 + s, s < 0 -> 1 / (1 - s): positive, increasing, continuous. */
export const SCORE_SCRIPT = `${DOT}\nreturn s >= 0 ? 1 + s : 1 / (1 - s);`;
/** Script field: the exact score itself. */
export const EXACT_SCRIPT = `${DOT}\nreturn s;`;

/**
 * Documents re-ranked per shard (the rescore window) for k results. The search wants T = max(min, perK·k) candidates
 * in all. Ids are routed to shards by hash, so the number of the T best candidates one of s shards holds is
 * binomial (T, 1/s): each shard re-ranks its share T/s plus `spread` standard deviations √(T/s · (1 − 1/s)), plus
 * perShard·(s − 1); at most max (index.max_rescore_window). One shard: T. (6 shards, T 400: 97 a shard, not 400.)
 * @param {number} k
 * @param {number} shards
 * @param {{min: number, perK: number, spread: number, perShard: number, max: number}} c store.opensearch.candidates
 */
export function candidateCount(k, shards, c) {
  const total = Math.max(c.min, Math.ceil(c.perK * k));
  const s = Math.max(1, shards);
  const share = total / s;
  return Math.min(c.max, Math.ceil(share + c.spread * Math.sqrt(share * (1 - 1 / s))) + c.perShard * (s - 1));
}

/**
 * The engine-side filters of the search options (validate.js's NativeSearchOptions).
 * @param {import('../native.js').NativeSearchOptions} o
 * @param {string[]} [moreExcluded] ids excluded besides o.excludeIds
 */
export function filtersOf(o, moreExcluded = []) {
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
  const ex = [...(o.excludeIds ?? []), ...moreExcluded];
  if (ex.length) mustNot.push({ ids: { values: ex.map(osId) } });
  return { filter, mustNot };
}

/**
 * @typedef {object} FeatureCounts documents per split-sign feature (store.js's featureCounts)
 * @property {Int32Array} p documents with a positive value at each index
 * @property {Int32Array} n documents with a negative value at each index
 * @property {number} postings the sum of both
 * @property {number} docs documents counted
 */

/**
 * The query's terms a candidate search asks for (positions into indices/values). Every agreeing term when
 * `counts` is null (the exact mode's candidates); else the terms by decreasing |weight|, each taken while the
 * postings of the terms taken stay within `budget` (a term whose list would overflow it is skipped, a smaller
 * one after it may still fit), at most maxTerms. Terms of features the counts do not know (new since they
 * were made) count as empty lists.
 * @param {Uint32Array} indices
 * @param {Float32Array} values
 * @param {FeatureCounts | null} counts
 * @param {number} budget postings
 * @param {number} maxTerms
 * @returns {number[]}
 */
export function candidateTerms(indices, values, counts, budget, maxTerms) {
  const order = [];
  for (let j = 0; j < indices.length; j++) if (values[j] !== 0) order.push(j);
  if (counts === null && order.length <= maxTerms) return order;
  order.sort((a, b) => Math.abs(values[b]) - Math.abs(values[a]) || a - b);
  if (counts === null) return order.slice(0, maxTerms);
  const out = [];
  let used = 0;
  for (const j of order) {
    const list = values[j] > 0 ? counts.p : counts.n;
    const df = indices[j] < list.length ? list[indices[j]] : 0;
    if (used + df > budget) continue;
    used += df;
    out.push(j);
    if (out.length >= maxTerms) break;
  }
  return out;
}

/**
 * The postings budget of a fast search: a fraction of the collection's postings, at least `min`.
 * @param {FeatureCounts} counts
 * @param {{min: number, fraction: number}} b store.opensearch.postingsBudget
 */
export function postingsBudget(counts, b) {
  return Math.max(b.min, Math.ceil(b.fraction * counts.postings));
}

/**
 * The candidate part of a search body: `query`, one term clause per chosen term, of its sign, boosted by |weight|
 * (the field's similarity makes a clause's score boost × the document's weight), with the filters inside; the
 * excluded ids in `post_filter`, applied as hits are collected. A bool of `should` clauses alone is scored window
 * by window over the postings (Lucene's BooleanScorer); a `must_not` or `filter` beside them makes it a
 * conjunction scored document by document through a heap, ~2 ms more a search at 100k documents
 * (docs/scale-out.md), so a related search's exclusion of its own document does not go there.
 * @param {Uint32Array} indices
 * @param {Float32Array} values
 * @param {number[]} terms positions (candidateTerms)
 * @param {import('../native.js').NativeSearchOptions} o
 * @returns {{query: object, post_filter?: object}}
 */
export function candidateQuery(indices, values, terms, o) {
  const should = [];
  for (const j of terms) {
    const v = values[j];
    should.push({ term: { f: { value: `${v > 0 ? 'p' : 'n'}${indices[j]}`, boost: Math.abs(v) } } });
  }
  const { filter, mustNot } = filtersOf({ ...o, excludeIds: [] });
  const bool = filter.length || mustNot.length ? { should, minimum_should_match: 1, filter, must_not: mustNot } : { should };
  const ex = o.excludeIds ?? [];
  return { query: { bool }, ...(ex.length ? { post_filter: { bool: { must_not: [{ ids: { values: ex.map(osId) } }] } } } : {}) };
}

/**
 * A search body: the candidates' `query` (and `post_filter`) ranked by it, the best `window` per shard re-ranked
 * exactly in the engine, the best `size` of those returned with their exact score (`fields.s`), id and metadata.
 * @param {{query: object, post_filter?: object}} candidates
 * @param {Uint32Array} qi
 * @param {Float32Array} qv
 * @param {number} window
 * @param {number} size
 */
export function rescoredSearch(candidates, qi, qv, window, size) {
  const params = { q: encodeVector(qi, qv) };
  return {
    ...candidates, size, track_total_hits: false, _source: ['id', 'meta'],
    rescore: {
      window_size: window,
      query: {
        score_mode: 'total', query_weight: 0, rescore_query_weight: 1,
        rescore_query: { script_score: { query: { match_all: {} }, script: { lang: 'painless', source: SCORE_SCRIPT, params } } },
      },
    },
    script_fields: { s: { script: { lang: 'painless', source: EXACT_SCRIPT, params } } },
  };
}

/**
 * Hits of a rescoredSearch, best first by exact score, ties by id.
 * @param {any[]} hits
 * @returns {import('../collection.js').SearchHit[]}
 */
export function exactHits(hits) {
  const out = hits.map((h) => ({ id: String(h._source.id), score: Number(h.fields.s[0]), meta: h._source.meta ?? {} }));
  return out.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
}

/** A term's weight keeps 8 significant bits of the value, truncated (encoding.js): a true agreeing part is at most this much above. */
export const FEATURE_REL_ERROR = 2 ** -7;

/**
 * The rescore score of an exact score, as the engine rounds it (SCORE_SCRIPT, then float32).
 * @param {number} s
 */
export function rescoreOf(s) {
  return Math.fround(s >= 0 ? 1 + s : 1 / (1 - s));
}
