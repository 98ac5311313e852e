// The vector store: sparse SCDV document vectors, top-k by dot product, shared by many processes.
// Other code depends only on this module, the folder's public face. See README.md in this folder.
export { openModelStore, mayHaveModelStore } from './model-store.js';
export { openStore, Store } from './store.js';
export { Collection } from './collection.js';
export { validateCollectionName, COLLECTION_NAME_RE } from './names.js';
export { DEFAULT_ENGINE_OPTIONS } from './engine.js';
export { MAX_K } from './validate.js';
export { searchesInFlight } from './search-threads.js';
export { CAPABILITY_METHODS, NO_OPTIONAL_CALLS } from './contract.js';
/** @typedef {import('./collection.js').SearchHit} SearchHit */
/** @typedef {import('./collection.js').StoredDoc} StoredDoc */
/** @typedef {import('./collection.js').StoreDocInput} StoreDocInput */
/** @typedef {import('./validate.js').SearchOptions} SearchOptions */
/** @typedef {import('./validate.js').SparseVector} SparseVector */
/** @typedef {import('./validate.js').DocMeta} DocMeta */
/** @typedef {import('./store.js').StoreOptions} StoreOptions */
/** @typedef {import('./store.js').CollectionOptions} CollectionOptions */
/** @typedef {import('./engine.js').EngineStats} CollectionStats */
/** @typedef {import('./contract.js').StoreBackend} StoreBackend */
/** @typedef {import('./contract.js').CollectionHandle} CollectionHandle */
/** @typedef {import('./contract.js').CollectionCapabilities} CollectionCapabilities */
/** @typedef {import('./contract.js').BackendHealth} BackendHealth */
