// The backend contract every store implements (native: store.js; OpenSearch: opensearch/): its types, and the
// names of the optional calls a collection declares in `capabilities`.
// A method may return its value or a promise of it: callers always `await` (awaiting a value is free), so the
// native store keeps its synchronous implementation and a networked backend answers asynchronously.
// See README.md, "Backend contract".

/**
 * @template T
 * @typedef {T | Promise<T>} MaybePromise
 */

/**
 * The optional calls of a collection handle, declared once by its backend (`c.capabilities`, the same object for
 * every handle of a backend): callers read it instead of probing for methods, and the contract suite
 * (tests/store/contract.js) checks on each backend that every declared call is there and every other one absent.
 * @typedef {object} CollectionCapabilities
 * @property {boolean} vectors `vectors(ids)`: many stored vectors in one call (without it: get() per id)
 * @property {boolean} getMany `getMany(ids)`: many stored documents, metadata included, in one call (without it: get()
 *   per id; a networked backend's round trip each)
 * @property {boolean} scores `scores(ids, vector)`: stored vectors dotted with a query in place (without it: from the
 *   fetched vectors)
 * @property {boolean} leanSearch `searchAsyncIds` and `metas`: a search without metadata, and the metadata of the
 *   hits kept (without it: searchAsync with every hit's metadata)
 * @property {boolean} fusedRerank `searchRerankedAsync`: a related list's whole re-ranking in one call (without it:
 *   pipeline/match/rerank.js searchReranked over the other calls)
 * @property {boolean} fusedRerankById `searchRerankedByIdAsync`, only with fusedRerank: the same with a stored
 *   document's vector as the query, looked up by the store (without it: the vector fetched, then as fusedRerank)
 */

/**
 * The methods each capability stands for.
 * @type {Readonly<Record<keyof CollectionCapabilities, readonly string[]>>}
 */
export const CAPABILITY_METHODS = Object.freeze({
  vectors: ['vectors'],
  getMany: ['getMany'],
  scores: ['scores'],
  leanSearch: ['searchAsyncIds', 'metas'],
  fusedRerank: ['searchRerankedAsync'],
  fusedRerankById: ['searchRerankedByIdAsync'],
});

/**
 * The capabilities of a handle that has none of the optional calls.
 * @type {Readonly<CollectionCapabilities>}
 */
export const NO_OPTIONAL_CALLS = Object.freeze({ vectors: false, getMany: false, scores: false, leanSearch: false, fusedRerank: false, fusedRerankById: false });

/**
 * @typedef {object} CollectionHandle
 * @property {string} name
 * @property {Readonly<CollectionCapabilities>} capabilities which of the optional calls below the handle has
 * @property {number} width vector width, fixed at creation
 * @property {string | null} createdAt the collection's creation time (ISO), null before its first stored document
 * @property {(docs: import('./collection.js').StoreDocInput[], opts?: {refresh?: boolean}) => Promise<void>} upsert resolves
 *   when acknowledged (durable). `refresh: false` (batch indexing): a networked backend need not make the write
 *   searchable before answering; the batch calls flush() at its end. The native store is always visible at once.
 * @property {(ids: string[]) => Promise<number>} delete how many of the ids were live
 * @property {(id: string) => MaybePromise<import('./collection.js').StoredDoc | null>} get
 * @property {(ids: string[]) => MaybePromise<({indices: Uint32Array, values: Float32Array} | null)[]>} [vectors] optional
 *   (capabilities.vectors): the stored vectors of many ids in one call (null: no live document)
 * @property {(ids: string[]) => MaybePromise<(import('./collection.js').StoredDoc | null)[]>} [getMany] optional
 *   (capabilities.getMany): get() of many ids in one call, in order (null: no live document)
 * @property {(id: string) => MaybePromise<boolean>} exists
 * @property {(vector: import('./validate.js').SparseVectorInput, opts?: import('./validate.js').SearchOptions) => MaybePromise<import('./collection.js').SearchHit[]>} search
 * @property {(vector: import('./validate.js').SparseVectorInput, opts?: import('./validate.js').SearchOptions) => Promise<import('./collection.js').SearchHit[]>} searchAsync without blocking the event loop
 * @property {(vector: import('./validate.js').SparseVectorInput, opts?: import('./validate.js').SearchOptions) => Promise<{id: string, score: number}[]>} [searchAsyncIds]
 *   optional, with metas (capabilities.leanSearch): searchAsync without the metadata
 * @property {(ids: string[]) => MaybePromise<(string | null)[]>} [metas] optional, with searchAsyncIds
 *   (capabilities.leanSearch): the metadata of many ids as JSON text (null: no live document)
 * @property {(vector: import('./validate.js').SparseVectorInput, opts: import('./validate.js').SearchOptions & {k: number}, spec: import('./collection.js').RerankSpec) => Promise<import('./collection.js').RerankedHits>} [searchRerankedAsync]
 *   optional (capabilities.fusedRerank): the related list's whole re-ranking (pipeline/match/rerank.js searchReranked,
 *   no recency or per-site cap) in one call (the native store, on its thread pool)
 * @property {(id: string, opts: import('./validate.js').SearchOptions & {k: number}, spec: import('./collection.js').RerankSpec) => Promise<import('./collection.js').RerankedHits | null>} [searchRerankedByIdAsync]
 *   optional, with searchRerankedAsync (capabilities.fusedRerankById): the same with a stored document's vector as the query, looked up in the
 *   store (null: no live document has the id)
 * @property {() => Promise<Iterable<string>>} ids
 * @property {() => MaybePromise<number>} version grows whenever the contents may have changed
 * @property {() => MaybePromise<number>} count live documents
 * @property {() => MaybePromise<import('./engine.js').EngineStats>} stats
 * @property {() => Promise<void>} flush
 * @property {(ids: string[], vector: import('./validate.js').SparseVectorInput) => MaybePromise<Float64Array>} [scores] optional
 *   (capabilities.scores): each id's stored vector dotted with the vector, NaN when not stored
 */

/**
 * @typedef {{name: string, width: number, count: number}} CollectionListing
 * @typedef {{name: string, width: number, createdAt: string, count: number}} CollectionInfo
 */

/**
 * The health of a backend (for /readyz): ok, or not with the reason.
 * @typedef {{ok: boolean, backend: string, detail?: string}} BackendHealth
 */

/**
 * The indexed-layout record of one collection (models/<name>/indexed.json's entries; see pipeline/serving).
 * @typedef {Record<string, unknown>} LayoutEntry
 */

/**
 * @typedef {object} StoreBackend
 * @property {'native' | 'opensearch'} backend
 * @property {string} model the model whose store this is
 * @property {(name: string, options?: import('./store.js').CollectionOptions) => MaybePromise<CollectionHandle>} collection
 * @property {(name: string) => MaybePromise<CollectionInfo | null>} collectionInfo
 * @property {() => MaybePromise<CollectionListing[]>} listCollections
 * @property {(name: string) => Promise<void>} dropCollection
 * @property {() => MaybePromise<BackendHealth>} health
 * @property {() => Promise<void>} close
 * @property {() => Promise<Record<string, LayoutEntry>>} [readLayouts] the layouts recorded in the backend (a shared
 *   backend keeps them, so every host sees them); absent on the native store, whose record is the model folder's
 *   indexed.json (pipeline/serving: layoutRecords() is the one switch)
 * @property {(collection: string, entry: LayoutEntry | null) => Promise<void>} [recordLayout] null forgets
 * @property {(collection: string, width: number) => Promise<{created: boolean}>} [beginLoad] the start of `scdv index`
 *   (OpenSearch: the index, created when absent, set for a bulk load, its settings to restore recorded); absent on
 *   the native store
 * @property {(collection: string) => Promise<boolean>} [endLoad] the end of `scdv index`, also of a failed or an
 *   interrupted one: beginLoad's settings restored (false: the collection was in no load)
 * @property {(collection: string, documents: number) => Promise<{bytesPerDoc: number, segments: number, leasesPassed: boolean, waitedMs: number, mergeMs: number} | null>} [compactAfterLoad]
 *   the end of `scdv index` that wrote `documents` (OpenSearch: a merge to one segment a shard when the run was
 *   large, null when not merged); absent on the native store, which merges in the background
 */

