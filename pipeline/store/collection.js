// Collection: the public API of one collection. It validates arguments and shapes results; storage and
// search are delegated to an engine object (today always NativeEngine; see README.md "Engine interface").
import { errors } from '../errors.js';
import { normalizeId, normalizeSearchOptions, normalizeVector, prepareDoc } from './validate.js';
import { DEFAULT_ENGINE_OPTIONS } from './engine.js';

/**
 * Every optional call of the backend contract (contract.js): the native store has them all.
 * @type {Readonly<import('./contract.js').CollectionCapabilities>}
 */
const NATIVE_CAPABILITIES = Object.freeze({ vectors: true, getMany: false, scores: true, leanSearch: true, fusedRerank: true, fusedRerankById: true });

/** Search defaults while a collection does not exist yet (its searches answer nothing anyway). */
const { budget, candidates, minPostings } = DEFAULT_ENGINE_OPTIONS;
const NO_ENGINE_DEFAULTS = { budget, candidates, minPostings };

/**
 * @typedef {object} SearchHit
 * @property {string} id
 * @property {number} score dot product with the query (exact, from the stored float32 values)
 * @property {Record<string, unknown>} meta the metadata stored with the document
 */

/**
 * @typedef {object} StoredDoc
 * @property {string} id
 * @property {Record<string, unknown>} meta
 * @property {import('./validate.js').SparseVector} vector
 */

/**
 * @typedef {object} StoreDocInput
 * @property {string | number} id
 * @property {import('./validate.js').SparseVectorInput} vector
 * @property {import('./validate.js').DocMeta & Record<string, unknown>} [meta]
 */

/**
 * @param {import('./native.js').NativeHits} r
 * @returns {SearchHit[]}
 */
function toHits(r) {
  const out = new Array(r.ids.length);
  for (let i = 0; i < r.ids.length; i++) out[i] = { id: r.ids[i], score: r.scores[i], meta: JSON.parse(r.metas[i]) };
  return out;
}

/**
 * What searchRerankedAsync does besides the search (pipeline/match/rerank.js, searchReranked).
 * @typedef {object} RerankSpec
 * @property {number} want results wanted (from + k)
 * @property {number} maxK the pool (opts.k first) doubles up to this while results are missing
 * @property {number} head the pool's first ranks that must be certain (max(want, feedback docs))
 * @property {number | null} threshold near-duplicate collapsing above this similarity (null: none)
 * @property {{docs: number, weight: number} | null} feedback pseudo-relevance feedback (null or docs 0: none)
 * @property {boolean} [fields] hits may carry `fields` instead of `meta`: the UTF-8 bytes JSON.stringify(resultItem(hit))
 *   has after its id and score (pipeline/match/precomputed.js answerBytes), given by the store where it can prove them equal
 */

/**
 * @typedef {{id: string, duplicate_of?: string, similarity: number}} DroppedHit duplicate_of absent: of the query document
 * @typedef {{hits: {id: string, score: number, meta: string | undefined, fields?: Uint8Array}[], dropped: DroppedHit[], searched: number, fetched: number}} RerankedHits
 *   meta: the stored JSON text; undefined when fields (spec.fields) take its place
 */

/**
 * A RerankSpec checked (STORE_QUERY_INVALID names the problem) and spelled for the addon.
 * @param {RerankSpec} spec
 * @param {number} k the first pool
 * @param {string} call the method the error names
 * @returns {import('./native.js').NativeRerankSpec}
 */
function nativeSpec(spec, k, call) {
  const fail = (/** @type {string} */ m) => errors.STORE_QUERY_INVALID(`${call}: ${m}`);
  const int = (/** @type {unknown} */ x, /** @type {number} */ min) => typeof x === 'number' && Number.isInteger(x) && x >= min && x < 2 ** 32;
  if (!spec || typeof spec !== 'object') throw fail('spec must be an object');
  if (!int(spec.want, 1) || !int(spec.maxK, k) || !int(spec.head, 1)) throw fail('want and head must be positive integers, maxK at least k');
  if (spec.threshold !== null && !Number.isFinite(spec.threshold)) throw fail('threshold must be a number or null');
  const fb = spec.feedback;
  if (fb !== null && (typeof fb !== 'object' || !int(fb.docs, 0) || !Number.isFinite(fb.weight))) throw fail('feedback must be {docs, weight} or null');
  return {
    want: spec.want, maxK: spec.maxK, head: spec.head, threshold: spec.threshold, fbDocs: fb ? fb.docs : 0, fbWeight: fb ? fb.weight : 0, fields: spec.fields === true,
  };
}

/**
 * The addon's re-ranked list as RerankedHits.
 * @param {import('./native.js').NativeReranked} r
 * @returns {RerankedHits}
 */
function toReranked(r) {
  const hits = new Array(r.ids.length);
  const f = r.fields;
  for (let i = 0; i < hits.length; i++) {
    const meta = r.metas[i];
    hits[i] = !f || meta !== undefined ? { id: r.ids[i], score: r.scores[i], meta }
      : { id: r.ids[i], score: r.scores[i], meta, fields: f.bytes.subarray(f.offsets[i], f.offsets[i + 1]) };
  }
  const dropped = new Array(r.droppedIds.length);
  for (let i = 0; i < dropped.length; i++) {
    const of = r.droppedOf[i];
    // The JS path's record shapes, key order included (the answer's bytes).
    dropped[i] = of === null ? { id: r.droppedIds[i], similarity: r.droppedSimilarity[i] } : { id: r.droppedIds[i], duplicate_of: of, similarity: r.droppedSimilarity[i] };
  }
  return { hits, dropped, searched: r.searched, fetched: r.fetched };
}

/**
 * Opens the collection's engine: with `create`, creating the collection on disk when missing; without, null
 * when it does not exist (nothing is created). With `create`, throws SCDV_STORE_BUSY, never waiting, while a write
 * or a drop of this process holds the collection's LOCK (see process-locks.js); EngineReady then resolves when that
 * is over. Without, it opens without the lock then (engine.js).
 * @typedef {(create: boolean) => import('./engine.js').NativeEngine | null} EngineOpener
 * @typedef {() => Promise<void>} EngineReady
 */

/** Openings a write retries after SCDV_STORE_BUSY (each after the holder let go) before it gives up with it. */
const BUSY_RETRIES = 50;

export class Collection {
  /** @type {string} */ #name;
  /** @type {number} */ #width;
  /** @type {EngineOpener} */ #open;
  /** @type {import('./engine.js').NativeEngine | null} */ #engine = null;
  /** @type {EngineReady | null} */ #ready;

  /**
   * @param {string} name
   * @param {number} width
   * @param {EngineOpener} open
   * @param {import('./engine.js').NativeEngine | null} engine already open, or null (then opened on use)
   * @param {EngineReady | null} [ready] for a handle that may create the collection (opened with a width); null
   *   for one that may not, whose writes after a drop are refused (SCDV_COLLECTION_NOT_FOUND)
   */
  constructor(name, width, open, engine, ready = null) {
    this.#name = name;
    this.#width = width;
    this.#open = open;
    this.#engine = engine;
    this.#ready = ready;
  }

  /** The engine when the collection exists on disk (opened on first use), else null: reads answer "empty". */
  #existing() {
    this.#engine ??= this.#open(false);
    return this.#engine;
  }

  /**
   * The engine for a write that is about to happen: the collection is created on disk now if missing. Through a
   * handle that may create it, a drop by this process (under way, or done since the handle was opened) is waited
   * for asynchronously, and the write then creates the collection anew, as a write sent after the drop would.
   * @returns {Promise<import('./engine.js').NativeEngine>}
   */
  async #forWrite() {
    for (let attempt = 0; ; attempt++) {
      if (this.#ready && this.#engine?.droppedHere) this.#engine = null;
      if (this.#engine) return this.#engine;
      try {
        this.#engine = /** @type {import('./engine.js').NativeEngine} */ (this.#open(true));
        return this.#engine;
      } catch (err) {
        if (!this.#ready || /** @type {any} */ (err)?.code !== 'SCDV_STORE_BUSY' || attempt >= BUSY_RETRIES) throw err;
        await this.#ready();
      }
    }
  }

  /** @returns {string} */
  get name() { return this.#name; }
  /** @returns {Readonly<import('./contract.js').CollectionCapabilities>} the contract's optional calls this handle has: all */
  get capabilities() { return NATIVE_CAPABILITIES; }
  /** @returns {number} vector width, fixed at creation */
  get width() { return this.#engine?.width ?? this.#width; }
  /** @returns {string | null} when the collection was created (collection.json), null while it has not been */
  get createdAt() { return this.#existing()?.createdAt ?? null; }

  /**
   * Inserts or replaces documents. Resolves once the batch is durable (fsynced to the write-ahead log): it
   * survives a crash of this process at any later moment, and every process sees it within a second
   * (this one at once). A batch is atomic. Within a batch, a later copy of an id wins.
   * @param {StoreDocInput[]} docs
   * @returns {Promise<void>}
   * @throws {import('../errors.js').ScdvError} SCDV_STORE_DOC_INVALID naming the document (nothing is written)
   */
  async upsert(docs) {
    if (!Array.isArray(docs)) throw errors.STORE_DOC_INVALID('?', 'upsert takes an array of documents');
    const prepared = docs.map((d) => prepareDoc(d, this.width));
    if (prepared.length === 0) return; // nothing to write: a collection that does not exist is not created
    for (let again = true; ; again = false) {
      const engine = await this.#forWrite();
      try {
        await engine.upsert(prepared);
        return;
      } catch (err) {
        // Refused, not written, because this process dropped the collection before the write's turn came:
        // written to the collection made anew instead (once).
        if (!(again && this.#ready && engine.droppedHere && /** @type {any} */ (err)?.code === 'SCDV_COLLECTION_NOT_FOUND')) throw err;
      }
    }
  }

  /**
   * Deletes documents by id (durable when resolved, like upsert).
   * @param {(string | number)[]} ids
   * @returns {Promise<number>} how many of them were live documents
   */
  async delete(ids) {
    if (!Array.isArray(ids)) throw errors.STORE_DOC_INVALID('?', 'delete takes an array of ids');
    const norm = ids.map(normalizeId);
    const engine = this.#existing();
    if (norm.length === 0 || !engine) return 0;
    return engine.delete(norm);
  }

  /**
   * @param {string | number} id
   * @returns {StoredDoc | null}
   */
  get(id) {
    const key = normalizeId(id);
    const r = this.#existing()?.get(key);
    if (!r) return null;
    return { id: key, meta: JSON.parse(r.meta), vector: { indices: r.indices, values: r.values } };
  }

  /**
   * The dot product of each id's stored vector with a query, NaN for an id that is not stored: re-scoring a few
   * candidates without copying their vectors (pseudo-relevance feedback, pipeline/match/rerank.js).
   * @param {(string | number)[]} ids
   * @param {import('./validate.js').SparseVectorInput} vector
   * @returns {Float64Array}
   */
  scores(ids, vector) {
    const { indices, values } = normalizeVector(vector, this.width, (m) => errors.STORE_QUERY_INVALID(m));
    const engine = this.#existing();
    return engine ? engine.scores(ids.map(normalizeId), indices, values) : new Float64Array(ids.length).fill(NaN);
  }

  /**
   * The stored vectors of many documents (null where no live document has the id), read from one snapshot in one
   * native call without their metadata: the re-ranking's collapse needs ~10 per request. The vectors are views
   * of two shared buffers (read them, do not write to them).
   * @param {(string | number)[]} ids
   * @returns {({indices: Uint32Array, values: Float32Array} | null)[]}
   */
  vectors(ids) {
    if (!Array.isArray(ids)) throw errors.STORE_DOC_INVALID('?', 'vectors takes an array of ids');
    const keys = ids.map(normalizeId);
    const engine = this.#existing();
    if (!engine || keys.length === 0) return keys.map(() => null);
    const r = engine.vectors(keys);
    return keys.map((_, i) => (r.found[i] ? {
      indices: r.indices.subarray(r.offsets[i], r.offsets[i + 1]), values: r.values.subarray(r.offsets[i], r.offsets[i + 1]),
    } : null));
  }

  /**
   * Top-k documents by dot product with the vector, best first (ties by id). Never returns deleted documents
   * or superseded versions. Synchronous (for batch code; blocks the event loop for the search's duration).
   *
   * mode 'exact': the k documents with the highest exact scores among those passing the filters (ties broken
   *   by id; scores equal within float rounding may swap). Proven with bounds, not sampled.
   * mode 'fast' (default): each segment reads the query's posting lists by largest contribution until they
   *   hold the share `budget` of its contribution mass, and rescores its best `candidates` documents exactly. Scores returned are exact; the set may miss a true
   *   top-k document (recall@10 >= 0.99 measured on the benchmark data; no guarantee per query).
   *
   * @param {import('./validate.js').SparseVectorInput} vector
   * @param {import('./validate.js').SearchOptions} [opts]
   * @returns {SearchHit[]}
   */
  search(vector, opts) {
    const q = this.#searchArgs(vector, opts);
    return q.engine ? toHits(q.engine.search(q.indices, q.values, q.options)) : [];
  }

  /**
   * search() on the store's search threads: the event loop stays free (use this in servers).
   * @param {import('./validate.js').SparseVectorInput} vector
   * @param {import('./validate.js').SearchOptions} [opts]
   * @returns {Promise<SearchHit[]>}
   */
  async searchAsync(vector, opts) {
    const q = this.#searchArgs(vector, opts);
    return q.engine ? toHits(await q.engine.searchAsync(q.indices, q.values, q.options)) : [];
  }

  /**
   * searchAsync() without the metadata: ids and scores only, for callers that keep a few of many hits and fetch
   * those hits' metadata with metas() (the re-ranking's candidate pool: making each hit's metadata string cost the
   * event loop more than the rest of the hit).
   * @param {import('./validate.js').SparseVectorInput} vector
   * @param {import('./validate.js').SearchOptions} [opts]
   * @returns {Promise<{id: string, score: number}[]>}
   */
  async searchAsyncIds(vector, opts) {
    const q = this.#searchArgs(vector, opts);
    if (!q.engine) return [];
    const r = await q.engine.searchIdsAsync(q.indices, q.values, q.options);
    const out = new Array(r.ids.length);
    for (let i = 0; i < r.ids.length; i++) out[i] = { id: r.ids[i], score: r.scores[i] };
    return out;
  }

  /**
   * The related list's re-ranking (pipeline/match/rerank.js, searchReranked: pool search, pseudo-relevance feedback,
   * near-duplicate collapse, pool doubling) in one call on a search thread, from one snapshot: the event loop only
   * converts the answer. The hits are searchReranked's bit for bit (tests/store/rerank-native.test.js); no recency
   * and no per-site cap (those read the pool's metadata: the JS path does them).
   * @param {import('./validate.js').SparseVectorInput} vector
   * @param {import('./validate.js').SearchOptions & {k: number}} opts the search's options, k: the first pool
   * @param {RerankSpec} spec
   * @returns {Promise<RerankedHits>}
   */
  async searchRerankedAsync(vector, opts, spec) {
    const q = this.#searchArgs(vector, opts);
    const native = nativeSpec(spec, q.options.k, 'searchRerankedAsync');
    if (!q.engine) return { hits: [], dropped: [], searched: q.options.k, fetched: 0 };
    return toReranked(await q.engine.searchRerankedAsync(q.indices, q.values, q.options, native));
  }

  /**
   * searchRerankedAsync with the stored vector of the document `id` as the query, looked up on the pool in the same
   * snapshot the search reads (the related-by-id list: no vector crosses into JavaScript); null when no live
   * document has the id. Its answer is searchRerankedAsync's for that vector (tests/store/rerank-native.test.js).
   * @param {string | number} id
   * @param {import('./validate.js').SearchOptions & {k: number}} opts the search's options, k: the first pool
   * @param {RerankSpec} spec
   * @returns {Promise<RerankedHits | null>}
   */
  async searchRerankedByIdAsync(id, opts, spec) {
    const key = normalizeId(id);
    const engine = this.#existing();
    const options = normalizeSearchOptions(opts, engine?.searchDefaults ?? NO_ENGINE_DEFAULTS);
    const native = nativeSpec(spec, options.k, 'searchRerankedByIdAsync');
    if (!engine) return null;
    const r = await engine.searchRerankedByIdAsync(key, options, native);
    return r && toReranked(r);
  }

  /**
   * A search's query and options checked (STORE_QUERY_INVALID names the problem) and its engine (null: the
   * collection has no documents yet).
   * @param {import('./validate.js').SparseVectorInput} vector
   * @param {import('./validate.js').SearchOptions} [opts]
   */
  #searchArgs(vector, opts) {
    const { indices, values } = normalizeVector(vector, this.width, (m) => errors.STORE_QUERY_INVALID(m));
    const engine = this.#existing();
    return { indices, values, engine, options: normalizeSearchOptions(opts, engine?.searchDefaults ?? NO_ENGINE_DEFAULTS) };
  }

  /**
   * The metadata of many documents as their stored JSON text (null where no live document has the id), from one
   * snapshot in one native call: the hits a re-ranked list keeps, after a searchAsyncIds of its pool.
   * @param {(string | number)[]} ids
   * @returns {(string | null)[]}
   */
  metas(ids) {
    if (!Array.isArray(ids)) throw errors.STORE_DOC_INVALID('?', 'metas takes an array of ids');
    const keys = ids.map(normalizeId);
    const engine = this.#existing();
    if (!engine || keys.length === 0) return keys.map(() => null);
    return engine.metas(keys);
  }

  /**
   * search() plus what it cost: postings decoded (of how many the query's lists hold), documents scored
   * exactly, segments answered by a scan of their filtered documents.
   * @param {import('./validate.js').SparseVectorInput} vector
   * @param {import('./validate.js').SearchOptions} [opts]
   * @returns {{hits: SearchHit[], stats: import('./native.js').NativeSearchStats}}
   */
  profile(vector, opts) {
    const { indices, values } = normalizeVector(vector, this.width, (m) => errors.STORE_QUERY_INVALID(m));
    const engine = this.#existing();
    const o = { ...normalizeSearchOptions(opts, engine?.searchDefaults ?? NO_ENGINE_DEFAULTS), stats: true };
    if (!engine) {
      return { hits: [], stats: { postings: 0, postingsTotal: 0, candidates: 0, rescored: 0, segments: 0, bruteSegments: 0, earlyExits: 0, threads: 0, taatMs: 0, scanMs: 0, rescoreMs: 0 } };
    }
    const r = engine.search(indices, values, o);
    return { hits: toHits(r), stats: /** @type {import('./native.js').NativeSearchStats} */ (r.stats) };
  }

  /**
   * Documents related to a stored one: search with its own vector, itself excluded.
   * @param {string | number} id
   * @param {import('./validate.js').SearchOptions} [opts]
   * @returns {Promise<SearchHit[] | null>} null when the id is not stored
   */
  async related(id, opts = {}) {
    const doc = this.get(id);
    if (!doc) return null;
    const excludeIds = [...(opts.excludeIds ?? []), doc.id];
    return this.searchAsync(doc.vector, { ...opts, excludeIds });
  }

  /**
   * Whether a live document has this id (cheaper than get(): nothing is copied).
   * @param {string | number} id
   * @returns {boolean}
   */
  exists(id) {
    const key = normalizeId(id);
    return this.#existing()?.exists(key) ?? false;
  }

  /**
   * Every live id, as of the call (a snapshot: later writes are not seen), each once, in no particular order.
   * The ids are read lazily, page by page, as the iterable is consumed; it can be iterated more than once.
   *   for (const id of await c.ids()) ...
   * @returns {Promise<Iterable<string>>}
   */
  async ids() {
    return this.#existing()?.ids() ?? [];
  }

  /**
   * A cheap change counter: it grows whenever the collection may have changed (a write by any process, seen
   * within refreshMs; also flushes and merges). Two equal values from the same Collection object mean the same
   * contents; values are per process (not comparable between processes).
   * @returns {number}
   */
  version() {
    return this.#existing()?.version() ?? 0;
  }

  /** @returns {number} live documents */
  count() {
    return this.#existing()?.count() ?? 0;
  }

  /** @returns {import('./engine.js').EngineStats} */
  stats() {
    const engine = this.#existing();
    if (engine) return engine.stats();
    return {
      name: this.#name, width: this.#width, segments: 0, docs: 0, deleted: 0, bytes: 0, nnz: 0, bytes_per_nnz: { postings: 0, total: 0 },
      wal: { seq: 0, docs: 0, bytes: 0 }, generation: 0, segmentDetails: [], lastBackgroundError: null,
    };
  }

  /** Writes the write-ahead log into a segment now (normally automatic). */
  async flush() {
    await this.#existing()?.flush();
  }

  /** Merges every segment into one, dropping deleted documents (normally tiered merging runs in the background). */
  async merge() {
    await this.#existing()?.merge({ force: true });
  }
}
