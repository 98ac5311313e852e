// The vector store: sparse SCDV document vectors, top-k by dot product, shared by many processes.
// Other code depends only on this module. See README.md in this folder.
import fs from 'node:fs';
import { errors } from '../errors.js';
import { storeDirFor, validateModelName } from '../paths.js';
import { openStore } from './store.js';

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

/**
 * The store of one model, on the backend the config names (store.backend): the one place that decides it.
 * Every caller (server, stages, workers, eval, inspect, precompute, demo, `scdv collection`) opens stores here.
 * Callers `await` every contract call (see contract.js), whichever backend answers.
 * @param {string} model
 * @param {{store: import('../config.js').Config['store']}} config
 * @returns {Promise<StoreBackend>}
 */
export async function openModelStore(model, config) {
  validateModelName(model);
  const backend = config.store.backend;
  if (backend === 'native') return openStore(storeDirFor(model));
  if (backend === 'opensearch') {
    // Loaded only when used: `npm start` on the native store never loads the client.
    const { openOpenSearchStore } = await import('./opensearch/store.js');
    return openOpenSearchStore(model, config.store.opensearch);
  }
  throw errors.CONFIG_INVALID(`store.backend must be native or opensearch, got ${JSON.stringify(backend)}`);
}

/**
 * Whether the model may have a store to look at, without creating one by looking (opening a native store
 * creates its folder; a cluster is always there to ask).
 * @param {string} model
 * @param {{store: import('../config.js').Config['store']}} config
 */
export function mayHaveModelStore(model, config) {
  return config.store.backend !== 'native' || fs.existsSync(storeDirFor(validateModelName(model)));
}
