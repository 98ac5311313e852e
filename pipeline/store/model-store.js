// The store of one model, on the backend the config names (store.backend).
import fs from 'node:fs';
import { errors } from '../errors.js';
import { storeDirFor, validateModelName } from '../paths.js';
import { openStore } from './store.js';

/** @typedef {import('./contract.js').StoreBackend} StoreBackend */

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
