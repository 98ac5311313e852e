// Re-ranking of search hits, one implementation for every list the product serves (related by id or text,
// match by id or text, precomputed matches), on any store backend: it needs only the hits and a way to fetch
// stored vectors.
//
// - Near-duplicate collapsing: walking the ranked hits, a hit whose similarity to the query document (its
//   score) or to a result kept above it is above `duplicateThreshold` is dropped and reported, so the same
//   story syndicated or re-posted does not fill the list.
// - Recency (`halfLifeMs`): ranking score = score − |score| · w · (1 − 0.5^(age / halfLife)), with age the time
//   from the document's published_at to `now` (0 for dates in the future) and w = `recencyWeight`; a document
//   without a date counts as infinitely old (score · (1 − w)). For a positive score this is
//   score · ((1 − w) + w · 0.5^(age / halfLife)): a document one half-life old loses w / 2 of its score.
// - Diversity (`maxPerSite`): at most this many results per site (documents without a site are not capped).
// - Pseudo-relevance feedback (`feedback`, related lists): the query is searched once for a pool of `pool`
//   candidates; Rocchio's expanded query q' = normalise(q + weight · mean of the first `docs` hits' stored vectors,
//   cut to its 2·nnz(q) heaviest entries) then re-scores that pool only (no second search): the list is the pool
//   ordered by cosine to q', its scores those cosines. Near-duplicates of the query document are still judged by
//   their similarity to q itself. Measured in docs/relevance.md ("Pseudo-relevance feedback").
//
// The hits are the best `pool` by similarity (searchReranked fetches more when too many are dropped), so recency
// reorders the most similar documents rather than scanning for the newest: use `since` for a hard cut-off.
//
// searchReranked below is the definition. The native store also does it whole in one call on its search threads
// (Collection.searchRerankedAsync, pipeline/store/native/src/rerank.cc: the pool search, feedbackRescored with
// expandQuery, rerank's collapse with duplicateOf, the doubling) when no option reads metadata during the walk
// (no recency, no per-site cap); searchCollection picks it. It mirrors this file step for step, rounding for
// rounding: tests/store/rerank-native.test.js proves its answers equal searchReranked's bit for bit, and
// tests/server/feedback.test.js that the related route's bytes are the same either way.
import { parseDate } from '../dates.js';
import { DenseScratch, dotsWith, expandQuery } from '../embed/vectorizer.js';

/**
 * @typedef {object} RerankOptions
 * @property {number | null} duplicateThreshold drop hits more similar than this to the query or a kept hit (null: no collapsing)
 * @property {number | null} halfLifeMs recency half-life (null: rank by similarity alone)
 * @property {number} recencyWeight w of the recency formula, in [0, 1]
 * @property {number | null} maxPerSite at most this many results per site (null: no cap)
 * @property {number} now epoch ms the ages are measured at
 * @property {Feedback | null} [feedback] pseudo-relevance feedback (null, absent or docs 0: none)
 */

/**
 * @typedef {{docs: number, weight: number, pool: number}} Feedback re-score the first `pool` hits against
 *   q + weight · the mean of the first `docs` hits
 */

/**
 * @typedef {{id: string, score: number, meta: any}} Hit a store hit (meta: an object or JSON text)
 * @typedef {import('../embed/vectorizer.js').SparseVector} SparseVector
 * @typedef {(ids: string[]) => Promise<(SparseVector | null)[]>} VectorLookup stored vectors of ids, in order (null: gone)
 * @typedef {(ids: string[], query: SparseVector) => Promise<Float64Array>} ScoreLookup stored vectors of ids dotted
 *   with a query, in order (NaN: gone)
 * @typedef {{id: string, duplicate_of?: string, similarity: number}} DroppedDuplicate duplicate_of absent: a duplicate of the query document
 * @typedef {Hit & {ranking_score?: number}} RankedHit ranking_score when recency applied; meta parsed only when an option
 *   read it (recency, maxPerSite), else as the store gave it (resultItem parses either)
 */

/** Units of a half-life such as `7d`: seconds, minutes, hours, days, weeks. */
const UNIT_MS = /** @type {Record<string, number>} */ ({ s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 });
/**
 * The spelling of a half-life: a whole number (1-999999) and a unit. The API's schemas use it as it is, so that
 * every value the OpenAPI document allows is accepted.
 */
export const HALF_LIFE_PATTERN = '^[1-9][0-9]{0,5}[smhdw]$';

/**
 * A half-life such as `7d`, `12h`, `90m`, `2w` in ms; NaN when it is not one.
 * @param {string} text
 */
export function parseHalfLife(text) {
  if (typeof text !== 'string' || !new RegExp(HALF_LIFE_PATTERN).test(text)) return NaN;
  return Number(text.slice(0, -1)) * UNIT_MS[text.slice(-1)];
}

/**
 * Whether feedback settings change a list: docs and weight both above 0 (either at 0 makes feedback a no-op). Every
 * reader of the question asks it here.
 * @param {{docs: number, weight: number} | null | undefined} feedback
 * @returns {boolean}
 */
export const feedbackOn = (feedback) => Boolean(feedback && feedback.docs > 0 && feedback.weight > 0);

/**
 * The feedback a related list uses when it asks for it: the configured depth, weight and pool, or null when they
 * make it a no-op.
 * @param {{docs: number, weight: number, pool: number}} cfg server.rerank.relatedFeedback
 * @returns {Feedback | null}
 */
export const feedbackSettings = (cfg) => (feedbackOn(cfg) ? { docs: cfg.docs, weight: cfg.weight, pool: cfg.pool } : null);

/**
 * The feedback a related list uses when the request does not say (the API's default of `feedback`, eval's lists):
 * the configured settings when they are enabled and not a no-op, else null.
 * @param {{enabled: boolean, docs: number, weight: number, pool: number}} cfg server.rerank.relatedFeedback
 * @returns {Feedback | null}
 */
export const defaultFeedback = (cfg) => (cfg.enabled ? feedbackSettings(cfg) : null);

/** @param {RerankOptions} options whether any option changes the plain top-k */
export const rerankActive = (options) => options.duplicateThreshold !== null || options.halfLifeMs !== null || options.maxPerSite !== null;

/**
 * The ranking score of a hit under the recency preference (the formula at the top of this file).
 * @param {number} score
 * @param {number} publishedMs NaN when the document has no date
 * @param {RerankOptions} options
 */
export function recencyScore(score, publishedMs, options) {
  if (options.halfLifeMs === null) return score;
  const decay = Number.isNaN(publishedMs) ? 0 : 0.5 ** (Math.max(0, options.now - publishedMs) / options.halfLifeMs);
  return score - Math.abs(score) * options.recencyWeight * (1 - decay);
}

/** @param {unknown} v published_at as stored (ISO text or epoch ms) */
function publishedMs(v) {
  if (typeof v === 'number') return v;
  return typeof v === 'string' ? parseDate(v) : NaN;
}

/**
 * Re-rank hits (best first by score, as the store returns them) and keep the first `want` that pass.
 * Vectors are fetched only for hits that reach the comparison with kept results, a batch at a time.
 * @param {Hit[]} hits
 * @param {number} want results wanted (from + k)
 * @param {RerankOptions} options
 * @param {VectorLookup} vectorsOf
 * @param {SparseVector | null} [original] the query before feedback expanded it (scores are to the expanded one):
 *   near-duplicates of the query document are judged by their similarity to it
 * @returns {Promise<{hits: RankedHit[], dropped: DroppedDuplicate[], fetched: number}>}
 */
export async function rerank(hits, want, options, vectorsOf, original = null) {
  // Metadata is parsed only when an option reads it: a collapsed list passes it through to resultItem, which parses
  // the kept hits' alone (not the whole candidate pool's).
  const parse = options.halfLifeMs !== null || options.maxPerSite !== null;
  /** @type {RankedHit[]} */
  let ranked = parse ? hits.map((h) => ({ ...h, meta: typeof h.meta === 'string' ? JSON.parse(h.meta) : (h.meta ?? {}) })) : hits.slice();
  if (options.halfLifeMs !== null) {
    for (const h of ranked) h.ranking_score = recencyScore(h.score, publishedMs(h.meta.published_at), options);
    ranked = ranked.sort((a, b) => /** @type {number} */ (b.ranking_score) - /** @type {number} */ (a.ranking_score) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
  const t = options.duplicateThreshold;
  /** @type {RankedHit[]} */
  const kept = [];
  /** @type {SparseVector[]} */
  const keptVectors = [];
  /** @type {DroppedDuplicate[]} */
  const dropped = [];
  /** @type {number[]} rank of each dropped hit: the report keeps those ranked above the last result */
  const droppedAt = [];
  let lastKeptAt = -1;
  /** @type {Map<string, number>} */
  const perSite = new Map();
  let fetched = 0;
  let i = 0;
  while (kept.length < want && i < ranked.length) {
    // The next hits that survive the checks needing no vector: as many as results are still missing.
    /** @type {RankedHit[]} */
    const batch = [];
    /** @type {number[]} */
    const batchAt = [];
    while (i < ranked.length && batch.length < want - kept.length) {
      const h = ranked[i++];
      if (t !== null && !original && h.score > t) { dropped.push({ id: h.id, similarity: h.score }); droppedAt.push(i - 1); continue; }
      batch.push(h);
      batchAt.push(i - 1);
    }
    const vectors = t !== null && batch.length ? await vectorsOf(batch.map((h) => h.id)) : [];
    fetched += vectors.length;
    // The query held once per batch (a gather per candidate instead of a merge: equal bit for bit), released before
    // the next await (the scratch is the thread's).
    if (t !== null && original) queryScratch.hold(original);
    try {
      for (let j = 0; j < batch.length && kept.length < want; j++) {
        const h = batch[j];
        const site = parse && typeof h.meta.site === 'string' ? h.meta.site : null;
        if (options.maxPerSite !== null && site !== null && (perSite.get(site) ?? 0) >= options.maxPerSite) continue;
        if (t !== null) {
          const v = vectors[j];
          if (!v) continue; // deleted since the search
          const toQuery = original ? queryScratch.dot(v) : -Infinity;
          if (toQuery > t) { dropped.push({ id: h.id, similarity: toQuery }); droppedAt.push(batchAt[j]); continue; }
          const dup = duplicateOf(v, h.score, kept, keptVectors, t);
          if (dup) { dropped.push({ id: h.id, duplicate_of: dup.id, similarity: dup.similarity }); droppedAt.push(batchAt[j]); continue; }
          keptVectors.push(v);
        }
        kept.push(h);
        lastKeptAt = batchAt[j];
        if (site !== null) perSite.set(site, (perSite.get(site) ?? 0) + 1);
      }
    } finally {
      queryScratch.release();
    }
  }
  // A full list reports what was dropped above its last result; a short one, everything it walked past.
  const report = kept.length < want ? dropped : dropped.filter((_, j) => droppedAt[j] < lastKeptAt);
  return { hits: kept, dropped: report, fetched };
}

/**
 * The first kept result more similar than t to v, with that similarity. With the query q, the angle between two
 * unit vectors is at least the difference of their angles to q, so cos(|θa − θb|) bounds their similarity from
 * above: pairs whose scores are far apart need no dot product.
 * @param {SparseVector} v
 * @param {number} score v's similarity to the query
 * @param {RankedHit[]} kept
 * @param {SparseVector[]} keptVectors
 * @param {number} t
 */
function duplicateOf(v, score, kept, keptVectors, t) {
  const theta = Math.acos(Math.max(-1, Math.min(1, score)));
  try {
    for (let j = 0; j < kept.length; j++) {
      const bound = Math.cos(Math.abs(theta - Math.acos(Math.max(-1, Math.min(1, kept[j].score)))));
      if (bound + 1e-6 <= t) continue;
      // v spread once, then a branch-free gather per kept result (the merge of sparseDot was most of the loop's time).
      if (scratch.held !== v) scratch.hold(v);
      const s = scratch.dot(keptVectors[j]);
      if (s > t) return { id: kept[j].id, similarity: s };
    }
    return null;
  } finally {
    scratch.release();
  }
}

/** The collapse's dense scratches (one per thread: re-ranking is synchronous between its awaits). */
const scratch = new DenseScratch();
const queryScratch = new DenseScratch();

/**
 * Search and re-rank until `want` results are kept: the store is asked for a pool of candidates (poolFactor ×
 * want, at least poolMin, at least feedback.pool with feedback, at most maxK), and for twice as many while
 * results are missing and the pool was full. Without an active option it is one plain search of `want`. With
 * feedback, the pool is re-scored against the query expanded with its first hits (feedbackRescored: by the store
 * in place when it can, else from fetched vectors, which the collapsing then finds cached), and the store is
 * searched once. Only the pool's head is asked to be certain (`certified`: the first max(want, feedback.docs) hits, as
 * a search of that many would give them; the rest of the pool is the best the store scored exactly anyway): the walk
 * below it and the re-scoring against the expanded query reorder the pool in any case, and a search that certifies
 * only its head costs the native store about half the exact rescoring (BENCHMARKS.md "Measurements behind the defaults").
 * @param {object} request
 * @param {SparseVector} request.query
 * @param {(query: SparseVector, n: number, certified: number, withMeta: boolean) => Promise<Hit[]>} request.search the store's
 *   top n for a query (filters applied), of which the first `certified` (<= n) must be certain and the rest may be
 *   best effort; without withMeta the hits may come without meta (undefined) when metasOf is given
 * @param {(ids: string[]) => Promise<(SparseVector | null)[]>} request.vectorsOf stored vectors (e.g. collection.get)
 * @param {(ids: string[]) => Promise<(string | null)[]>} [request.metasOf] stored metadata as JSON text (null: gone), for
 *   the kept hits that came without it: a pool's dropped candidates never cost a metadata string
 * @param {ScoreLookup} [request.scoresOf] stored vectors dotted with a query (storedScores); absent: from vectorsOf
 * @param {number} request.want
 * @param {number} request.maxK
 * @param {RerankOptions} request.options
 * @param {{poolFactor: number, poolMin: number}} request.pool
 * @returns {Promise<{hits: RankedHit[], dropped: DroppedDuplicate[], searched: number, fetched: number}>}
 */
export async function searchReranked(request) {
  /** @type {Map<string, SparseVector | null>} */
  const cache = new Map();
  let fetched = 0;
  /** @type {VectorLookup} */
  const cached = async (ids) => {
    const missing = ids.filter((id) => !cache.has(id));
    if (missing.length) {
      const got = await request.vectorsOf(missing);
      fetched += missing.length;
      missing.forEach((id, j) => cache.set(id, got[j]));
    }
    return ids.map((id) => /** @type {SparseVector | null} */ (cache.get(id)));
  };
  const fb = activeFeedback(request.options);
  if (!fb && !rerankActive(request.options)) return { hits: await request.search(request.query, request.want, request.want, true), dropped: [], searched: request.want, fetched };
  // The pool's metadata is read by recency and the per-site cap only; else the kept hits' is fetched at the end.
  const withMeta = !request.metasOf || request.options.halfLifeMs !== null || request.options.maxPerSite !== null;
  const plan = poolPlan(request.want, request.maxK, request.options, request.pool);
  let n = plan.n;
  const head = plan.head;
  for (;;) {
    const hits = await request.search(request.query, n, Math.min(n, head), withMeta);
    // Feedback scored from the vectors reads the whole pool's: in one call, not its first docs' and then the rest.
    if (fb && !request.scoresOf) await cached(hits.map((h) => h.id));
    const ranked = fb ? await feedbackRescored(hits, request.query, fb, cached, request.scoresOf ?? (async (ids, q) => dotsWith(q, await cached(ids)))) : hits;
    const r = await rerank(ranked, request.want, request.options, cached, fb ? request.query : null);
    if (r.hits.length >= request.want || hits.length < n || n >= request.maxK) {
      return { hits: request.metasOf ? await withMetas(r.hits, request.metasOf) : r.hits, dropped: r.dropped, searched: n, fetched };
    }
    n = Math.min(request.maxK, n * 2);
  }
}

/** @param {RerankOptions} o the feedback to apply: null when absent or a no-op */
const activeFeedback = (o) => (o.feedback && feedbackOn(o.feedback) ? o.feedback : null);

/**
 * searchReranked's first pool: poolFactor × want, at least poolMin, at least feedback.pool with feedback, at most
 * maxK (n); and its head, the ranks the list is made of and feedback's first hits (the expansion), which are
 * certified. The native store's fused call starts from the same plan.
 * @param {number} want
 * @param {number} maxK
 * @param {RerankOptions} options
 * @param {{poolFactor: number, poolMin: number}} pool
 */
export function poolPlan(want, maxK, options, pool) {
  const fb = activeFeedback(options);
  return { n: Math.min(maxK, Math.max(pool.poolMin, Math.ceil(want * pool.poolFactor), fb ? fb.pool : 0)), head: Math.max(want, fb ? fb.docs : 0) };
}

/**
 * The hits with their metadata: fetched in one call for those that came without it; a hit deleted since the search
 * is left out (as the collapse leaves out one whose vector is gone).
 * @param {RankedHit[]} hits
 * @param {(ids: string[]) => Promise<(string | null)[]>} metasOf
 * @returns {Promise<RankedHit[]>}
 */
async function withMetas(hits, metasOf) {
  const missing = hits.filter((h) => h.meta === undefined);
  if (!missing.length) return hits;
  const metas = await metasOf(missing.map((h) => h.id));
  missing.forEach((h, j) => { h.meta = metas[j]; });
  return hits.filter((h) => h.meta !== null);
}

/**
 * Pseudo-relevance feedback as a re-ranking: the hits (best first for q) re-scored by cosine to Rocchio's expanded
 * query q' (from the first `docs` of them that are still stored), best first, ties by id; hits deleted since the
 * search are left out. Without any stored vector among them the hits come back as they are.
 * @param {Hit[]} hits
 * @param {SparseVector} query q
 * @param {Feedback} feedback
 * @param {VectorLookup} vectorsOf
 * @param {ScoreLookup} scoresOf
 * @returns {Promise<Hit[]>}
 */
export async function feedbackRescored(hits, query, feedback, vectorsOf, scoresOf) {
  /** @type {SparseVector[]} */
  const first = [];
  for (let i = 0; i < hits.length && first.length < feedback.docs; i += feedback.docs) {
    for (const v of await vectorsOf(hits.slice(i, i + feedback.docs).map((h) => h.id))) if (v && first.length < feedback.docs) first.push(v);
  }
  if (!first.length) return hits;
  // At most twice the query's non-zeros (its heaviest): on the livedoor dev split the cut loses nothing
  // (docs/relevance.md).
  const expanded = expandQuery(query, first, feedback.weight, 2 * query.indices.length);
  const scores = await scoresOf(hits.map((h) => h.id), expanded);
  /** @type {Hit[]} */
  const out = [];
  hits.forEach((h, j) => { if (!Number.isNaN(scores[j])) out.push({ ...h, score: scores[j] }); });
  return out.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
}

/**
 * What searchCollection needs of a collection: a store handle (pipeline/store/contract.js CollectionHandle), or a
 * view of one (searchView). Which optional calls it has, its `capabilities` say.
 * @typedef {object} SearchTarget
 * @property {Readonly<import('../store/contract.js').CollectionCapabilities>} capabilities
 * @property {(v: SparseVector, o: any) => Promise<Hit[]>} searchAsync
 * @property {(id: string) => any} get
 * @property {(ids: string[]) => any} [vectors] capabilities.vectors: the stored vectors of many ids in one call
 * @property {(ids: string[]) => any} [getMany] capabilities.getMany: the stored documents of many ids in one call
 * @property {(ids: string[], v: SparseVector) => Float64Array | Promise<Float64Array>} [scores] capabilities.scores:
 *   stored vectors dotted with a query in place
 * @property {(v: SparseVector, o: any) => Promise<{id: string, score: number}[]>} [searchAsyncIds] capabilities.leanSearch:
 *   the candidate pool searched without metadata
 * @property {(ids: string[]) => any} [metas] capabilities.leanSearch: the kept hits' metadata
 * @property {(v: SparseVector, o: any, spec: import('../store/collection.js').RerankSpec) => Promise<import('../store/collection.js').RerankedHits>} [searchRerankedAsync]
 *   capabilities.fusedRerank: the whole of searchReranked in one call
 * @property {(id: string, o: any, spec: import('../store/collection.js').RerankSpec) => Promise<import('../store/collection.js').RerankedHits | null>} [searchRerankedByIdAsync]
 *   capabilities.fusedRerankById: the same with a stored document's vector as the query
 */

/**
 * An optional call its target's capabilities declare (the cast the declaration licenses).
 * @template T
 * @param {T | undefined} call
 * @returns {T}
 */
const declared = (call) => /** @type {T} */ (call);

/**
 * Each id's stored vector dotted with the query (NaN: not stored): the store's own call when it has one (the
 * native store scores in place), else from the vectors fetched with get.
 * @param {Pick<SearchTarget, 'capabilities' | 'get' | 'vectors' | 'scores'>} coll
 * @param {string[]} ids
 * @param {SparseVector} query
 * @returns {Promise<Float64Array>}
 */
export async function storedScores(coll, ids, query) {
  if (coll.capabilities.scores) return declared(coll.scores).call(coll, ids, query);
  return dotsWith(query, await storedVectors(coll, ids));
}

/**
 * The stored vectors of ids, in order (null: not stored): in one call when the backend has one (the native store's
 * vectors), else get() per id.
 * @param {Pick<SearchTarget, 'capabilities' | 'get' | 'vectors'>} coll
 * @param {string[]} ids
 * @returns {Promise<(SparseVector | null)[]>}
 */
export async function storedVectors(coll, ids) {
  if (coll.capabilities.vectors) return declared(coll.vectors).call(coll, ids);
  return Promise.all(ids.map(async (id) => (await coll.get(id))?.vector ?? null));
}

/**
 * The stored documents of ids, in order (null: not stored): in one call when the backend has one (OpenSearch's
 * getMany: one request instead of one each), else get() per id.
 * @param {Pick<SearchTarget, 'capabilities' | 'get' | 'getMany'>} coll
 * @param {string[]} ids
 * @returns {Promise<(import('../store/collection.js').StoredDoc | null)[]>}
 */
export async function storedDocs(coll, ids) {
  if (coll.capabilities.getMany) return declared(coll.getMany).call(coll, ids);
  return Promise.all(ids.map((id) => coll.get(id)));
}

/**
 * A collection searched with a query derived from the one given (an arm's method: its part of a hybrid vector):
 * searches and feedback scores use `queryOf(query)` (an empty derived query finds nothing), stored vectors and
 * metadata are the collection's. The store's fused re-ranking searches, expands and collapses with one vector, so
 * the view offers it only when `queryOf` returns the query unchanged.
 * @param {SearchTarget} coll
 * @param {(query: SparseVector) => SparseVector} queryOf
 * @param {boolean} unchanged queryOf returns its argument
 * @returns {SearchTarget}
 */
export function searchView(coll, queryOf, unchanged) {
  const caps = coll.capabilities;
  const fused = caps.fusedRerank && unchanged;
  const fusedById = fused && caps.fusedRerankById;
  return {
    // Feedback re-scores candidates with the derived part of its expanded query too: scores always derive.
    capabilities: Object.freeze({ vectors: caps.vectors, getMany: caps.getMany, scores: true, leanSearch: caps.leanSearch, fusedRerank: fused, fusedRerankById: fusedById }),
    searchAsync: async (v, opts) => {
      const q = queryOf(v);
      return q.indices.length === 0 ? [] : coll.searchAsync(q, opts);
    },
    get: (id) => coll.get(id),
    ...(caps.vectors ? { vectors: (/** @type {string[]} */ ids) => declared(coll.vectors).call(coll, ids) } : {}),
    ...(caps.getMany ? { getMany: (/** @type {string[]} */ ids) => declared(coll.getMany).call(coll, ids) } : {}),
    scores: (ids, v) => storedScores(coll, ids, queryOf(v)),
    // The pool without metadata, the kept hits' fetched after: the loop drops most candidates.
    ...(caps.leanSearch ? {
      searchAsyncIds: async (/** @type {SparseVector} */ v, /** @type {Record<string, any>} */ opts) => {
        const q = queryOf(v);
        return q.indices.length === 0 ? [] : declared(coll.searchAsyncIds).call(coll, q, opts);
      },
      metas: (/** @type {string[]} */ ids) => declared(coll.metas).call(coll, ids),
    } : {}),
    ...(fused ? { searchRerankedAsync: declared(coll.searchRerankedAsync).bind(coll) } : {}),
    ...(fusedById ? { searchRerankedByIdAsync: declared(coll.searchRerankedByIdAsync).bind(coll) } : {}),
  };
}

/**
 * searchReranked over a store collection (either backend: every store call is awaited), with the optional calls its
 * capabilities declare: the fused call when it applies (fusedCall), the lean pool search, in-place scores, vectors
 * in one call.
 * @param {SearchTarget} coll
 * @param {SparseVector} vector the query
 * @param {Record<string, any>} storeOptions search options but k (mode, filters, excludeIds)
 * @param {number} want
 * @param {RerankOptions} options
 * @param {{maxK: number, rerank: {poolFactor: number, poolMin: number}}} server config.server
 * @returns {Promise<{hits: RankedHit[], dropped: DroppedDuplicate[], searched: number, fetched: number}>}
 */
export function searchCollection(coll, vector, storeOptions, want, options, server) {
  const fused = fusedCall(coll, storeOptions, want, options, server);
  if (fused) return declared(coll.searchRerankedAsync).call(coll, vector, fused.opts, fused.spec);
  // The pool without metadata, the kept hits' fetched after (the native store).
  const lean = coll.capabilities.leanSearch;
  return searchReranked({
    query: vector,
    search: (q, n, certified, withMeta) => {
      const o = { ...storeOptions, k: n, ...(certified < n ? { certified } : {}) };
      // withMeta is false only when metasOf is given, i.e. with `lean`.
      return withMeta || !lean ? coll.searchAsync(q, o) : /** @type {Promise<Hit[]>} */ (/** @type {unknown} */ (declared(coll.searchAsyncIds).call(coll, q, o)));
    },
    vectorsOf: (ids) => storedVectors(coll, ids),
    ...(lean ? { metasOf: async (/** @type {string[]} */ ids) => /** @type {(string | null)[]} */ (await declared(coll.metas).call(coll, ids)) } : {}),
    ...(coll.capabilities.scores ? { scoresOf: (/** @type {string[]} */ ids, /** @type {SparseVector} */ q) => storedScores(coll, ids, q) } : {}),
    want, maxK: server.maxK, options, pool: server.rerank,
  });
}

/**
 * Whether the store's fused re-ranking answers a search (the one place this is decided): the collection declares the
 * call (capabilities.fusedRerank, or fusedRerankById for a search by a stored document: the native store; a
 * searchView only when it searches with the query unchanged), the options need no metadata during the walk (no
 * recency, no per-site cap), and something is re-ranked at all.
 * @param {Pick<SearchTarget, 'capabilities'>} coll
 * @param {RerankOptions} options
 * @param {boolean} [byId] the by-id form
 */
export const fusedRerankApplies = (coll, options, byId = false) => (byId ? coll.capabilities.fusedRerankById : coll.capabilities.fusedRerank) &&
  options.halfLifeMs === null && options.maxPerSite === null && (activeFeedback(options) !== null || options.duplicateThreshold !== null);

/**
 * The arguments of the store's fused call (searchRerankedAsync and its by-id form), or null when it does not apply
 * (fusedRerankApplies): the whole re-ranking then runs in the store, on its search threads.
 * @param {Pick<SearchTarget, 'capabilities'>} coll
 * @param {Record<string, any>} storeOptions
 * @param {number} want
 * @param {RerankOptions} options
 * @param {{maxK: number, rerank: {poolFactor: number, poolMin: number}}} server
 * @param {boolean} [byId] the by-id form
 */
function fusedCall(coll, storeOptions, want, options, server, byId = false) {
  if (!fusedRerankApplies(coll, options, byId)) return null;
  const fb = activeFeedback(options);
  const { n, head } = poolPlan(want, server.maxK, options, server.rerank);
  return {
    opts: { ...storeOptions, k: n },
    /** @type {import('../store/collection.js').RerankSpec} */
    spec: { want, maxK: server.maxK, head, threshold: options.duplicateThreshold, feedback: fb ? { docs: fb.docs, weight: fb.weight } : null },
  };
}

/**
 * searchCollection with the stored vector of the document `id` as the query; null when the collection has no such
 * document. The native store looks the vector up itself, in the snapshot it searches (searchRerankedByIdAsync: no
 * vector crosses into JavaScript) when the fused call applies; else the vector is fetched first. Its hits may carry
 * `fields` in place of `meta` (RerankSpec.fields): serialise them with answerBytes (pipeline/match/precomputed.js).
 * @param {SearchTarget} coll
 * @param {string} id
 * @param {Record<string, any>} storeOptions search options but k (mode, filters, excludeIds)
 * @param {number} want
 * @param {RerankOptions} options
 * @param {{maxK: number, rerank: {poolFactor: number, poolMin: number}}} server config.server
 * @returns {Promise<{hits: RankedHit[], dropped: DroppedDuplicate[], searched: number, fetched: number} | null>}
 */
export async function searchCollectionById(coll, id, storeOptions, want, options, server) {
  const fused = fusedCall(coll, storeOptions, want, options, server, true);
  if (fused) return declared(coll.searchRerankedByIdAsync).call(coll, id, fused.opts, { ...fused.spec, fields: true });
  const [vector] = await storedVectors(coll, [id]);
  return vector ? searchCollection(coll, vector, storeOptions, want, options, server) : null;
}

/**
 * What an answer computed with these options depends on, besides the clock: precomputed entries record it, and
 * one computed otherwise is not served for a request.
 * @param {RerankOptions} options
 */
export const rerankSignature = (options) => ({
  duplicate_threshold: options.duplicateThreshold, recency_half_life_ms: options.halfLifeMs,
  recency_weight: options.halfLifeMs === null ? null : options.recencyWeight, max_per_site: options.maxPerSite,
  ...(activeFeedback(options) ? { feedback: options.feedback } : {}), // absent when off: entries written before it still match
});
