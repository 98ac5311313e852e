// One collection on OpenSearch: the handle the contract describes (pipeline/store/contract.js), on the index
// `<prefix><model>--<collection>`. Writes go through the alias `<index>.w` with `require_alias`, so a write
// racing a drop is refused (SCDV_COLLECTION_NOT_FOUND) instead of auto-creating an index of guessed mappings.
import { errors } from '../../errors.js';
import { normalizeId, normalizeSearchOptions, normalizeVector, prepareDoc } from '../validate.js';
import { deleteOperation, indexOperation, osId, storedDoc } from './encoding.js';
import { request } from './connection.js';
import {
  FEATURE_REL_ERROR, candidateCount, candidateQuery, candidateTerms, exactHits, filtersOf, postingsBudget, rescoreOf, rescoredSearch,
} from './search.js';
import { computeFeatureCounts, readFeatureCounts } from './counts.js';
import { NO_OPTIONAL_CALLS } from '../contract.js';

/** The engine options the native store accepts in search options; here `candidates` overrides the formula. */
const SEARCH_DEFAULTS = { budget: 1, candidates: 0, minPostings: 0 };
/** OpenSearch's index.max_result_window (and max_rescore_window): one search returns or re-ranks at most this many. */
const MAX_WINDOW = 10_000;
/** What #bulk reads of a bulk answer (filter_path): each item's outcome and error, the version document's _version. */
const BULK_FILTER = 'items.*.status,items.*.result,items.*.error,items.*._version';
/** The contract's optional calls this backend has: many stored vectors in one request (vectors). */
const CAPABILITIES = Object.freeze({ ...NO_OPTIONAL_CALLS, vectors: true, getMany: true });
/** How often a handle looks for newer feature counts (counts.js), ms: they steer candidates, not correctness. */
const COUNTS_CHECK_MS = 60_000;

/**
 * What a handle shares with its store.
 * @typedef {object} StoreContext
 * @property {import('@opensearch-project/opensearch').Client} client
 * @property {string} model
 * @property {string[]} nodes
 * @property {import('../../config.js').Config['store']['opensearch']} cfg
 * @property {ReturnType<typeof import('./encoding.js').namesOf>} names
 * @property {() => void} checkOpen throws SCDV_STORE_CLOSED
 * @property {(name: string) => void} forget drops the store's cached handle of a collection found dropped
 * @property {(name: string, width: number) => Promise<{createdAt: string, shards: number}>} create the index (or the one another process created)
 * @property {(name: string) => Promise<{width: number, createdAt: string, shards: number} | null>} describe the index's recorded facts
 */

export class OpenSearchCollection {
  /** @type {StoreContext} */ #s;
  #name;
  #width;
  /** @type {string | null} */ #createdAt;
  #shards;
  #writer;
  #dropped = false;
  /** @type {Set<Promise<unknown>>} writes in flight: a drop and close wait for them */
  #writes = new Set();
  /** @type {{value: number, at: number}} */ #version = { value: 0, at: -Infinity };
  /** @type {import('./search.js').FeatureCounts | null} */ #counts = null;
  #countsAt = -Infinity;
  /** @type {Promise<void> | null} */ #countsLoad = null;
  /** this handle wrote since its feature counts were made: flush() makes them again */
  #countsStale = false;

  /**
   * @param {StoreContext} s
   * @param {string} name
   * @param {number} width
   * @param {{createdAt: string, shards: number} | null} existing null: a writer's handle of a collection not created yet
   * @param {boolean} writer
   */
  constructor(s, name, width, existing, writer) {
    this.#s = s;
    this.#name = name;
    this.#width = width;
    this.#createdAt = existing?.createdAt ?? null;
    this.#shards = existing?.shards ?? s.cfg.shards;
    this.#writer = writer;
  }

  get name() { return this.#name; }
  /** @returns {Readonly<import('../contract.js').CollectionCapabilities>} of the contract's optional calls, vectors(ids) */
  get capabilities() { return CAPABILITIES; }
  get width() { return this.#width; }
  /** @returns {string | null} */
  get createdAt() { return this.#createdAt; }
  get #index() { return this.#s.names.index(this.#name); }
  get #writeAlias() { return this.#s.names.writeAlias(this.#name); }

  /** @param {string} what */
  #ctx(what) {
    return { nodes: this.#s.nodes, what: `${what} (collection ${this.#name} of model ${this.#s.model})`, model: this.#s.model, collection: this.#name };
  }

  #check() {
    this.#s.checkOpen();
    if (this.#dropped) throw errors.COLLECTION_NOT_FOUND(this.#name, this.#s.model);
  }

  /**
   * A call found no index. A writer's handle of a collection it never saw reads as empty; otherwise the
   * collection was dropped (by any process): this handle is done.
   * @param {unknown} err
   * @returns {boolean} true: read as empty
   */
  #absent(err) {
    if (/** @type {any} */ (err)?.code !== 'SCDV_COLLECTION_NOT_FOUND') throw err;
    if (this.#writer && this.#createdAt === null) return true;
    this.#dropped = true;
    this.#s.forget(this.#name);
    throw err;
  }

  /**
   * @template T
   * @param {() => Promise<T>} fn
   * @returns {Promise<T>}
   */
  #track(fn) {
    const p = fn();
    this.#writes.add(p);
    const done = () => { this.#writes.delete(p); };
    p.then(done, done);
    return p;
  }

  /** Resolves when this handle's writes in flight are done (for drop and close). */
  async idle() {
    await Promise.allSettled([...this.#writes]);
  }

  /** Marks the handle dropped by this process. */
  markDropped() {
    this.#dropped = true;
  }

  /**
   * Inserts or replaces documents by id (bulk API). Resolves when acknowledged by the primary and its replicas
   * (translog fsynced). With `refresh` (default) it is searchable when it resolves (`refresh=wait_for`: up to
   * the index's refresh interval, 1 s); batch indexing passes `{refresh: false}` and calls flush() at the end.
   * Not atomic across documents: after a failure some may be written (an upsert again is harmless).
   * @param {import('../collection.js').StoreDocInput[]} docs
   * @param {{refresh?: boolean}} [opts]
   * @returns {Promise<void>}
   */
  async upsert(docs, opts = {}) {
    this.#check();
    if (!Array.isArray(docs)) throw errors.STORE_DOC_INVALID('?', 'upsert takes an array of documents');
    const prepared = docs.map((d) => prepareDoc(d, this.#width));
    if (prepared.length === 0) return;
    if (this.#createdAt === null) {
      if (!this.#writer) throw errors.COLLECTION_NOT_FOUND(this.#name, this.#s.model);
      const made = await this.#s.create(this.#name, this.#width);
      this.#createdAt = made.createdAt;
      this.#shards = made.shards;
    }
    await this.#track(async () => {
      for (let i = 0; i < prepared.length; i += this.#s.cfg.bulkDocs) {
        const chunk = prepared.slice(i, i + this.#s.cfg.bulkDocs);
        let body = '';
        for (const d of chunk) body += indexOperation(this.#writeAlias, d);
        await this.#bulk(body, opts.refresh ?? true, 'upsert', chunk.map((d) => d.id));
      }
      this.#countsStale = true;
    });
  }

  /**
   * Deletes documents by id.
   * @param {(string | number)[]} ids
   * @returns {Promise<number>} how many of them were live
   */
  async delete(ids) {
    this.#check();
    if (!Array.isArray(ids)) throw errors.STORE_DOC_INVALID('?', 'delete takes an array of ids');
    const unique = [...new Set(ids.map(normalizeId))];
    if (unique.length === 0 || (this.#createdAt === null && this.#writer)) return 0;
    return this.#track(async () => {
      let live = 0;
      for (let i = 0; i < unique.length; i += this.#s.cfg.bulkDocs) {
        const chunk = unique.slice(i, i + this.#s.cfg.bulkDocs);
        const body = chunk.map((id) => deleteOperation(this.#writeAlias, id)).join('');
        const items = await this.#bulk(body, true, 'delete', chunk);
        live += items.filter((it) => it.delete?.result === 'deleted').length;
      }
      return live;
    });
  }

  /**
   * One bulk request plus the bump of the collection's version document (other processes' caches follow it).
   * @param {string} body the collection's operations as ndjson lines (indexOperation, deleteOperation)
   * @param {boolean} refresh
   * @param {string} what
   * @param {string[]} ids the documents, in the order of the body's operations
   * @returns {Promise<any[]>} the items of the collection's operations
   */
  async #bulk(body, refresh, what, ids) {
    const { client, names } = this.#s;
    const bump = `${JSON.stringify({ index: { _index: names.versions, _id: names.versionId(this.#name) } })}\n${JSON.stringify({ model: this.#s.model, collection: this.#name, at: Date.now() })}\n`;
    let res;
    try {
      // The answer keeps what is read of it: the engine builds and this process parses ~30 bytes an item, not ~200.
      res = await request(() => client.bulk({ body: /** @type {any} */ (body + bump), refresh: refresh ? 'wait_for' : false, filter_path: BULK_FILTER }), this.#ctx(`bulk ${what}`));
    } catch (err) {
      this.#absent(err);
      throw err;
    }
    const items = /** @type {any[]} */ (res.body.items);
    const bumped = items.pop()?.index;
    if (bumped?._version) this.#version = { value: bumped._version, at: performance.now() };
    items.forEach((it, j) => {
      const r = it.index ?? it.delete;
      if (!r?.error || (it.delete && r.status === 404 && r.error === undefined)) return;
      const type = String(r.error.type);
      if (type === 'index_not_found_exception' || /require_alias/.test(String(r.error.reason))) {
        this.#dropped = true;
        this.#s.forget(this.#name);
        throw errors.COLLECTION_NOT_FOUND(this.#name, this.#s.model);
      }
      if (r.status === 429 || r.status === 503) throw errors.BACKEND_UNAVAILABLE('opensearch', this.#s.nodes.join(', '), `${what} of document ${JSON.stringify(ids[j])}: ${type}: ${r.error.reason}`);
      throw errors.BACKEND_REJECTED('opensearch', `${what} of document ${JSON.stringify(ids[j])}`, String(r.error.reason), type);
    });
    return items;
  }

  /**
   * @param {string | number} id
   * @returns {Promise<import('../collection.js').StoredDoc | null>}
   */
  async get(id) {
    this.#check();
    const key = normalizeId(id);
    if (this.#createdAt === null && this.#writer && (await this.count()) === 0) return null;
    return (await this.#stored([key], ['id', 'meta'], 'get')).get(key) ?? null;
  }

  /**
   * The stored vectors of many ids, in order (null: no live document), in one search per 10,000 distinct ids
   * instead of a get() each: a related list's re-ranking reads its whole candidate pool (feedback, near-duplicates).
   * @param {(string | number)[]} ids
   * @returns {Promise<({indices: Uint32Array, values: Float32Array} | null)[]>}
   */
  async vectors(ids) {
    return (await this.#many(ids, ['id'], 'vectors')).map((d) => d?.vector ?? null);
  }

  /**
   * get() of many ids, in order (null: no live document), in one search per 10,000 distinct ids instead of a round
   * trip each: a precompute batch reads its source pages (workers/precompute.js).
   * @param {(string | number)[]} ids
   * @returns {Promise<(import('../collection.js').StoredDoc | null)[]>}
   */
  async getMany(ids) {
    return this.#many(ids, ['id', 'meta'], 'getMany');
  }

  /**
   * The stored documents of a list of ids, in its order (null: no live document).
   * @param {(string | number)[]} ids
   * @param {string[]} source the `_source` fields read
   * @param {string} what the call, for errors
   * @returns {Promise<(import('../collection.js').StoredDoc | null)[]>}
   */
  async #many(ids, source, what) {
    this.#check();
    if (!Array.isArray(ids)) throw errors.STORE_DOC_INVALID('?', `${what} takes an array of ids`);
    const keys = ids.map(normalizeId);
    if (keys.length === 0) return [];
    if (this.#createdAt === null && this.#writer && (await this.count()) === 0) return keys.map(() => null);
    const found = await this.#stored([...new Set(keys)], source, what);
    return keys.map((k) => found.get(k) ?? null);
  }

  /**
   * The stored documents of distinct ids by id (an id not stored is absent). The vector is a doc value, which a
   * search reads; a document a search does not see yet (a batch write before its flush, a shard copy still
   * recovering) but the real-time get API does is read again after one refresh.
   * @param {string[]} keys distinct normalised ids
   * @param {string[]} source the `_source` fields read
   * @param {string} what the call, for errors
   * @returns {Promise<Map<string, import('../collection.js').StoredDoc>>}
   */
  async #stored(keys, source, what) {
    /** @type {Map<string, import('../collection.js').StoredDoc>} */
    const found = new Map();
    const read = async (/** @type {string[]} */ list) => {
      for (let i = 0; i < list.length; i += MAX_WINDOW) {
        const part = list.slice(i, i + MAX_WINDOW);
        const body = { query: { ids: { values: part.map(osId) } }, size: part.length, _source: source, docvalue_fields: ['v'], track_total_hits: false };
        for (const hit of (await this.#query(body, what)).hits.hits) {
          const doc = storedDoc(hit);
          found.set(doc.id, doc);
        }
      }
    };
    await read(keys);
    const missing = keys.filter((k) => !found.has(k));
    if (missing.length === 0) return found;
    const late = (await Promise.all(missing.map(async (k) => ((await this.exists(k)) ? k : null)))).filter((k) => k !== null);
    if (late.length === 0) return found;
    await request(() => this.#s.client.indices.refresh({ index: this.#index }), this.#ctx(what));
    await read(late);
    const unseen = late.find((k) => !found.has(k));
    if (unseen !== undefined) throw errors.BACKEND_UNAVAILABLE('opensearch', this.#s.nodes.join(', '), `${what} of document ${JSON.stringify(unseen)}: stored but not yet searchable`);
    return found;
  }

  /**
   * Whether a live document has this id (its vector is not fetched).
   * @param {string | number} id
   */
  async exists(id) {
    this.#check();
    const key = normalizeId(id);
    try {
      const res = await request(() => this.#s.client.get({ index: this.#index, id: osId(key), _source: false }, { ignore: [404] }), this.#ctx('exists'));
      const body = /** @type {any} */ (res.body);
      if (body?.error?.type === 'index_not_found_exception') this.#absent(errors.COLLECTION_NOT_FOUND(this.#name, this.#s.model));
      return Boolean(body?.found);
    } catch (err) {
      this.#absent(err);
      return false;
    }
  }

  /**
   * Top-k by exact dot product, re-ranked in the engine (see search.js). 'fast': one round, the candidates of the
   * query's terms within the postings budget (`candidates` overrides the rescore window). 'exact': every
   * agreeing term, rounds of growing windows until the k-th exact score is proven above what any document left
   * out can reach (its agreeing-sign part, bounded through Lucene's feature precision), up to 10,000 per shard.
   * @param {import('../validate.js').SparseVectorInput} vector
   * @param {import('../validate.js').SearchOptions} [opts]
   * @returns {Promise<import('../collection.js').SearchHit[]>}
   */
  async search(vector, opts) {
    this.#check();
    const { indices, values } = normalizeVector(vector, this.#width, (m) => errors.STORE_QUERY_INVALID(m));
    const o = normalizeSearchOptions(opts, SEARCH_DEFAULTS);
    if (this.#createdAt === null && this.#writer) {
      // Created meanwhile by another process? Ask once; else it reads as empty.
      if ((await this.count()) === 0) return [];
    }
    const { cfg } = this.#s;
    const asked = o.candidates ?? 0;
    const window = asked > 0 ? Math.min(MAX_WINDOW, Math.max(o.k, asked)) : Math.max(o.k, candidateCount(o.k, this.#shards, cfg.candidates));
    // A few more than k come back, so that float32 ties of the engine's ordering at the k-th place are settled in double.
    const size = Math.min(window, 2 * o.k);
    if (!o.exact) {
      const counts = await this.#featureCounts();
      if (counts !== null) {
        const terms = candidateTerms(indices, values, counts, postingsBudget(counts, cfg.postingsBudget), cfg.maxQueryTerms);
        const res = await this.#query(rescoredSearch(candidateQuery(indices, values, terms, o), indices, values, window, size), 'search');
        if (res.hits.hits.length >= o.k) return exactHits(res.hits.hits).slice(0, o.k);
        // Fewer than k documents share a budgeted term (filters, small collections): every term, as 'exact' does.
      }
    }
    return this.#searchAll(indices, values, o, window, size);
  }

  /**
   * Every agreeing term as candidates. Each round asks for the re-ranked best `size` of each shard's best
   * `window` and, beside it, the window-th best approximate score overall, which no document left out of every
   * shard's window exceeds. 'exact' returns when the k-th exact score beats both that bound (through the feature
   * precision) and the re-ranked hits not returned (their float32 rescore below the k-th's); else it grows.
   * @param {Uint32Array} indices
   * @param {Float32Array} values
   * @param {import('../native.js').NativeSearchOptions} o
   * @param {number} window
   * @param {number} size
   */
  async #searchAll(indices, values, o, window, size) {
    const terms = candidateTerms(indices, values, null, 0, this.#s.cfg.maxQueryTerms);
    const complete = terms.length === values.reduce((n, v) => n + (v !== 0 ? 1 : 0), 0);
    const query = candidateQuery(indices, values, terms, o);
    for (;;) {
      const [res, edge] = await Promise.all([
        this.#query(rescoredSearch(query, indices, values, window, size), 'search'),
        this.#query({ ...query, from: window - 1, size: 1, _source: false, track_total_hits: false }, 'search'),
      ]);
      const hits = /** @type {any[]} */ (res.hits.hits);
      const ranked = exactHits(hits);
      const allRescored = edge.hits.hits.length === 0; // fewer than `window` documents share a term: all re-ranked
      const allReturned = allRescored && hits.length < size;
      const kth = ranked[o.k - 1]?.score ?? -Infinity;
      if (allReturned && kth <= 0) return this.#fill(ranked, indices, values, o, window);
      if (allReturned || !o.exact) return ranked.slice(0, o.k);
      const outside = allRescored ? 0 : Number(edge.hits.hits[0]._score) * (1 + FEATURE_REL_ERROR) + 1e-6;
      const cutSettled = rescoreOf(kth) > Number(hits[hits.length - 1]._score);
      if (complete && kth > outside && cutSettled) return ranked.slice(0, o.k);
      if (window >= MAX_WINDOW && size >= window) return ranked.slice(0, o.k);
      if (!cutSettled) size = Math.min(MAX_WINDOW, size * 4);
      if (!complete || kth <= outside) window = Math.min(MAX_WINDOW, window * 4);
      window = Math.max(window, size);
    }
  }

  /** Same as search (never blocks the event loop). */
  /**
   * @param {import('../validate.js').SparseVectorInput} vector
   * @param {import('../validate.js').SearchOptions} [opts]
   */
  searchAsync(vector, opts) {
    return this.search(vector, opts);
  }

  /**
   * Every document sharing an agreeing term with the query is in `ranked`, and it holds fewer than k of them or
   * reaches scores ≤ 0: the rest (score 0 or below) come from the filters alone, re-ranked exactly too (at most
   * 10,000 of them per shard are looked at; `window` of them in 'fast').
   * @param {import('../collection.js').SearchHit[]} ranked
   * @param {Uint32Array} qi
   * @param {Float32Array} qv
   * @param {import('../native.js').NativeSearchOptions} o
   * @param {number} window
   */
  async #fill(ranked, qi, qv, o, window) {
    const { filter, mustNot } = filtersOf(o, ranked.map((h) => h.id));
    const w = o.exact ? MAX_WINDOW : Math.min(MAX_WINDOW, Math.max(window, 2 * o.k));
    const res = await this.#query(rescoredSearch({ query: { bool: { filter, must_not: mustNot } } }, qi, qv, w, Math.min(w, 2 * o.k)), 'search');
    const rest = exactHits(res.hits.hits);
    return [...ranked, ...rest].sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)).slice(0, o.k);
  }

  /**
   * The feature counts that steer a fast search's candidates (counts.js), looked for again every COUNTS_CHECK_MS;
   * made here when the collection has none yet. null: they cannot be had (every term is then asked for).
   * @returns {Promise<import('./search.js').FeatureCounts | null>}
   */
  async #featureCounts() {
    if (performance.now() - this.#countsAt < COUNTS_CHECK_MS) return this.#counts;
    if (!this.#countsLoad) {
      this.#countsLoad = (async () => {
        try {
          const ctx = this.#countsCtx();
          this.#counts = (await readFeatureCounts(ctx)) ?? (await computeFeatureCounts(ctx));
        } finally {
          this.#countsAt = performance.now();
          this.#countsLoad = null;
        }
      })();
    }
    // The first load is waited for; later ones run behind the counts in hand.
    if (this.#counts === null) await this.#countsLoad;
    return this.#counts;
  }

  /** @returns {import('./counts.js').CountsContext} */
  #countsCtx() {
    const { client, names } = this.#s;
    return { client, index: this.#index, versions: names.versions, id: names.countsId(this.#name), width: this.#width, ctx: this.#ctx('feature counts') };
  }

  /**
   * @param {object} body
   * @param {string} what
   * @returns {Promise<any>}
   */
  async #query(body, what) {
    try {
      const res = await request(() => this.#s.client.search({ index: this.#index, body }), this.#ctx(what));
      return res.body;
    } catch (err) {
      this.#absent(err);
      return { hits: { hits: [] } };
    }
  }

  /**
   * Every live id as of the call (a point-in-time scroll), each once.
   * @returns {Promise<Iterable<string>>}
   */
  async ids() {
    this.#check();
    /** @type {string[]} */
    const out = [];
    const { client } = this.#s;
    /** @type {any} */
    let res;
    try {
      res = (await request(() => client.search({ index: this.#index, scroll: '1m', body: { size: 5000, _source: ['id'], sort: ['_doc'] } }), this.#ctx('ids'))).body;
    } catch (err) {
      this.#absent(err);
      return out;
    }
    let scrollId = res._scroll_id;
    try {
      for (;;) {
        const hits = /** @type {any[]} */ (res.hits.hits);
        for (const h of hits) out.push(String(h._source.id));
        if (!scrollId || hits.length === 0) break;
        const sid = scrollId;
        res = (await request(() => client.scroll({ body: { scroll_id: sid, scroll: '1m' } }), this.#ctx('ids'))).body;
        scrollId = res._scroll_id;
      }
    } finally {
      if (scrollId) {
        const sid = scrollId;
        await client.clearScroll({ body: { scroll_id: sid } }).catch(() => {});
      }
    }
    return out;
  }

  /**
   * A number that grows with every write by any process: the `_version` of the collection's document in the
   * versions index, read at most every versionPollMs (this process's own writes update it at once).
   * @returns {Promise<number>}
   */
  async version() {
    this.#check();
    const now = performance.now();
    if (now - this.#version.at < this.#s.cfg.versionPollMs) return this.#version.value;
    const { client, names } = this.#s;
    const res = await request(() => client.get({ index: names.versions, id: names.versionId(this.#name), _source: false }, { ignore: [404] }), this.#ctx('version'));
    const body = /** @type {any} */ (res.body);
    const value = body?.found ? Number(body._version) : 0;
    if (value !== this.#version.value || now - this.#version.at >= this.#s.cfg.versionPollMs) this.#version = { value, at: now };
    return value;
  }

  /** @returns {Promise<number>} live documents (as of the last refresh: writes are refreshed when acknowledged) */
  async count() {
    this.#check();
    try {
      const res = await request(() => this.#s.client.count({ index: this.#index }), this.#ctx('count'));
      if (this.#createdAt === null && this.#writer) await this.#adoptExisting();
      return Number(res.body.count);
    } catch (err) {
      this.#absent(err);
      return 0;
    }
  }

  /** A writer's handle finds the collection another process created: it takes its creation time. */
  async #adoptExisting() {
    const found = await this.#s.describe(this.#name);
    if (!found) return;
    if (found.width !== this.#width) throw errors.STORE_WIDTH_MISMATCH(this.#name, String(found.width), String(this.#width));
    this.#createdAt = found.createdAt;
    this.#shards = found.shards;
  }

  /** @returns {Promise<import('../engine.js').EngineStats>} what OpenSearch knows (segments, WAL: 0) */
  async stats() {
    this.#check();
    const docs = await this.count();
    let bytes = 0;
    let segments = 0;
    if (this.#createdAt !== null) {
      const res = await request(() => this.#s.client.indices.stats({ index: this.#index, metric: ['store', 'segments'] }), this.#ctx('stats'));
      const all = /** @type {any} */ (res.body)._all?.primaries;
      bytes = Number(all?.store?.size_in_bytes ?? 0);
      segments = Number(all?.segments?.count ?? 0);
    }
    return {
      name: this.#name, width: this.#width, segments, docs, deleted: 0, bytes, nnz: 0, bytes_per_nnz: { postings: 0, total: 0 },
      wal: { seq: 0, docs: 0, bytes: 0 }, generation: await this.version(), segmentDetails: [], lastBackgroundError: null,
    };
  }

  /** Makes every acknowledged write searchable now (`_refresh`); writes are already durable when acknowledged. */
  async flush() {
    this.#check();
    await Promise.allSettled([...this.#writes]);
    if (this.#createdAt === null && this.#writer) return;
    try {
      await request(() => this.#s.client.indices.refresh({ index: this.#index }), this.#ctx('flush'));
      if (this.#countsStale) {
        this.#countsStale = false;
        this.#counts = await computeFeatureCounts(this.#countsCtx());
        this.#countsAt = performance.now();
      }
    } catch (err) {
      this.#absent(err);
    }
  }
}
