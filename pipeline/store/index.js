// The vector store: sparse SCDV document vectors, top-k by dot product, shared by many processes.
// Other code depends only on this module. See README.md in this folder.
export { openStore, Store } from './store.js';
export { Collection } from './collection.js';
export { validateCollectionName, COLLECTION_NAME_RE } from './names.js';
export { DEFAULT_ENGINE_OPTIONS } from './engine.js';
export { MAX_K } from './validate.js';
/** @typedef {import('./collection.js').SearchHit} SearchHit */
/** @typedef {import('./collection.js').StoredDoc} StoredDoc */
/** @typedef {import('./collection.js').StoreDocInput} StoreDocInput */
/** @typedef {import('./validate.js').SearchOptions} SearchOptions */
/** @typedef {import('./validate.js').SparseVector} SparseVector */
/** @typedef {import('./validate.js').DocMeta} DocMeta */
/** @typedef {import('./store.js').StoreOptions} StoreOptions */
/** @typedef {import('./store.js').CollectionOptions} CollectionOptions */
/** @typedef {import('./engine.js').EngineStats} CollectionStats */
