// The backend contract every store implements (native: store.js; OpenSearch: opensearch/). Types only.
// A method may return its value or a promise of it: callers always `await` (awaiting a value is free), so the
// native store keeps its synchronous implementation and a networked backend answers asynchronously.
// See README.md, "Backend contract".

/**
 * @template T
 * @typedef {T | Promise<T>} MaybePromise
 */

/**
 * @typedef {object} CollectionHandle
 * @property {string} name
 * @property {number} width vector width, fixed at creation
 * @property {string | null} createdAt the collection's creation time (ISO), null before its first stored document
 * @property {(docs: import('./collection.js').StoreDocInput[], opts?: {refresh?: boolean}) => Promise<void>} upsert resolves
 *   when acknowledged (durable). `refresh: false` (batch indexing): a networked backend need not make the write
 *   searchable before answering; the batch calls flush() at its end. The native store is always visible at once.
 * @property {(ids: string[]) => Promise<number>} delete how many of the ids were live
 * @property {(id: string) => MaybePromise<import('./collection.js').StoredDoc | null>} get
 * @property {(ids: string[]) => MaybePromise<({indices: Uint32Array, values: Float32Array} | null)[]>} [vectors] optional: the
 *   stored vectors of many ids in one call (null: no live document); callers fall back to get() per id without it
 * @property {(id: string) => MaybePromise<boolean>} exists
 * @property {(vector: import('./validate.js').SparseVectorInput, opts?: import('./validate.js').SearchOptions) => MaybePromise<import('./collection.js').SearchHit[]>} search
 * @property {(vector: import('./validate.js').SparseVectorInput, opts?: import('./validate.js').SearchOptions) => Promise<import('./collection.js').SearchHit[]>} searchAsync without blocking the event loop
 * @property {(vector: import('./validate.js').SparseVectorInput, opts?: import('./validate.js').SearchOptions) => Promise<{id: string, score: number}[]>} [searchAsyncIds]
 *   optional, with metas: searchAsync without the metadata (callers fall back to searchAsync without them)
 * @property {(ids: string[]) => MaybePromise<(string | null)[]>} [metas] optional, with searchAsyncIds: the metadata of
 *   many ids as JSON text (null: no live document)
 * @property {(vector: import('./validate.js').SparseVectorInput, opts: import('./validate.js').SearchOptions & {k: number}, spec: import('./collection.js').RerankSpec) => Promise<import('./collection.js').RerankedHits>} [searchRerankedAsync]
 *   optional: the related list's whole re-ranking (pipeline/match/rerank.js searchReranked, no recency or per-site cap)
 *   in one call (the native store, on its thread pool); callers run searchReranked without it
 * @property {(id: string, opts: import('./validate.js').SearchOptions & {k: number}, spec: import('./collection.js').RerankSpec) => Promise<import('./collection.js').RerankedHits | null>} [searchRerankedByIdAsync]
 *   optional, with searchRerankedAsync: the same with a stored document's vector as the query, looked up in the
 *   store (null: no live document has the id)
 * @property {() => Promise<Iterable<string>>} ids
 * @property {() => MaybePromise<number>} version grows whenever the contents may have changed
 * @property {() => MaybePromise<number>} count live documents
 * @property {() => MaybePromise<import('./engine.js').EngineStats>} stats
 * @property {() => Promise<void>} flush
 * @property {(ids: string[], vector: import('./validate.js').SparseVectorInput) => MaybePromise<Float64Array>} [scores] each
 *   id's stored vector dotted with the vector, NaN when not stored (optional: without it, callers fetch the vectors
 *   with get; the native store has it)
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
 */

export {};
