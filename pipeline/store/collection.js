// Collection: the public API of one collection. It validates arguments and shapes results; storage and
// search are delegated to an engine object (today always NativeEngine; see README.md "Engine interface").
import { errors } from '../errors.js';
import { normalizeId, normalizeSearchOptions, normalizeVector, prepareDoc } from './validate.js';

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

export class Collection {
  /** @type {import('./engine.js').NativeEngine} */
  #engine;

  /** @param {import('./engine.js').NativeEngine} engine */
  constructor(engine) {
    this.#engine = engine;
  }

  /** @returns {string} */
  get name() { return this.#engine.name; }
  /** @returns {number} vector width, fixed at creation */
  get width() { return this.#engine.width; }

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
    const prepared = docs.map((d) => prepareDoc(d, this.#engine.width));
    if (prepared.length === 0) return;
    await this.#engine.upsert(prepared);
  }

  /**
   * Deletes documents by id (durable when resolved, like upsert).
   * @param {(string | number)[]} ids
   * @returns {Promise<number>} how many of them were live documents
   */
  async delete(ids) {
    if (!Array.isArray(ids)) throw errors.STORE_DOC_INVALID('?', 'delete takes an array of ids');
    const norm = ids.map(normalizeId);
    if (norm.length === 0) return 0;
    return this.#engine.delete(norm);
  }

  /**
   * @param {string | number} id
   * @returns {StoredDoc | null}
   */
  get(id) {
    const key = normalizeId(id);
    const r = this.#engine.get(key);
    if (!r) return null;
    return { id: key, meta: JSON.parse(r.meta), vector: { indices: r.indices, values: r.values } };
  }

  /**
   * Top-k documents by dot product with the vector, best first (ties by id). Never returns deleted documents
   * or superseded versions. Synchronous (for batch code; blocks the event loop for the search's duration).
   *
   * mode 'exact': the k documents with the highest exact scores among those passing the filters (ties broken
   *   by id; scores equal within float rounding may swap). Proven with bounds, not sampled.
   * mode 'fast' (default): each segment reads the largest-contribution share `budget` of the query's postings
   *   and rescores its best `candidates` documents exactly. Scores returned are exact; the set may miss a true
   *   top-k document (recall@10 >= 0.99 measured on the benchmark data; no guarantee per query).
   *
   * @param {import('./validate.js').SparseVectorInput} vector
   * @param {import('./validate.js').SearchOptions} [opts]
   * @returns {SearchHit[]}
   */
  search(vector, opts) {
    const { indices, values } = normalizeVector(vector, this.#engine.width, (m) => errors.STORE_QUERY_INVALID(m));
    return toHits(this.#engine.search(indices, values, normalizeSearchOptions(opts, this.#engine.searchDefaults)));
  }

  /**
   * search() on the libuv thread pool: the event loop stays free (use this in servers).
   * @param {import('./validate.js').SparseVectorInput} vector
   * @param {import('./validate.js').SearchOptions} [opts]
   * @returns {Promise<SearchHit[]>}
   */
  async searchAsync(vector, opts) {
    const { indices, values } = normalizeVector(vector, this.#engine.width, (m) => errors.STORE_QUERY_INVALID(m));
    return toHits(await this.#engine.searchAsync(indices, values, normalizeSearchOptions(opts, this.#engine.searchDefaults)));
  }

  /**
   * search() plus what it cost: postings decoded (of how many the query's lists hold), documents scored
   * exactly, segments answered by a scan of their filtered documents.
   * @param {import('./validate.js').SparseVectorInput} vector
   * @param {import('./validate.js').SearchOptions} [opts]
   * @returns {{hits: SearchHit[], stats: import('./native.js').NativeSearchStats}}
   */
  profile(vector, opts) {
    const { indices, values } = normalizeVector(vector, this.#engine.width, (m) => errors.STORE_QUERY_INVALID(m));
    const r = this.#engine.search(indices, values, { ...normalizeSearchOptions(opts, this.#engine.searchDefaults), stats: true });
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
    return this.#engine.exists(normalizeId(id));
  }

  /**
   * Every live id, as of the call (a snapshot: later writes are not seen), each once, in no particular order.
   * The ids are read lazily, page by page, as the iterable is consumed; it can be iterated more than once.
   *   for (const id of await c.ids()) ...
   * @returns {Promise<Iterable<string>>}
   */
  async ids() {
    return this.#engine.ids();
  }

  /**
   * A cheap change counter: it grows whenever the collection may have changed (a write by any process, seen
   * within refreshMs; also flushes and merges). Two equal values from the same Collection object mean the same
   * contents; values are per process (not comparable between processes).
   * @returns {number}
   */
  version() {
    return this.#engine.version();
  }

  /** @returns {number} live documents */
  count() {
    return this.#engine.count();
  }

  /** @returns {import('./engine.js').EngineStats} */
  stats() {
    return this.#engine.stats();
  }

  /** Writes the write-ahead log into a segment now (normally automatic). */
  async flush() {
    await this.#engine.flush();
  }

  /** Merges every segment into one, dropping deleted documents (normally tiered merging runs in the background). */
  async merge() {
    await this.#engine.merge({ force: true });
  }
}
