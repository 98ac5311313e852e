// With which embed settings each collection of a model was indexed, recorded where its backend keeps them
// (layoutRecords). On the native backend, `scdv index` records them in the model folder:
//   models/<name>/indexed.json: { "<collection>": { "layout": VectorLayout, "indexed_at": ISO 8601, "corpus_sha256": "…",
//                                  "corpus": "/absolute/path.jsonl", "model_files_sha256": "…" }, … }
//   (corpus and model_files_sha256: entries written by older versions lack them)
// A query must be embedded with the layout of the vectors it is compared with (a hybrid and a pure SCDV
// vector, or two hybrid vectors of different α, do not mix).
import fs from 'node:fs';
import path from 'node:path';
import { modelsDir, validateModelName } from '../paths.js';
import { errors } from '../errors.js';
import { writeFileAtomic } from '../fsutil.js';
import { layoutDifference } from '../embed/layout.js';
import { mayHaveModelStore, openModelStore, validateCollectionName } from '../store/index.js';
import { modelFilesDigest } from '../model/files-digest.js';
import { isOwnCollection, ownCollectionOf } from '../match/expand.js';

/** @typedef {import('../config.js').Config} Config */
/** @typedef {import('../embed/layout.js').VectorLayout} VectorLayout */

export const INDEXED_FILE = 'indexed.json';

/** @param {string} model */
const modelDirOf = (model) => path.join(modelsDir(), validateModelName(model));

/**
 * The native record of a model's collections (a collection written through the API and precomputed has a
 * match_min_score and no layout).
 * @param {string} model
 * @returns {Record<string, {layout: VectorLayout, indexed_at: string, corpus_sha256?: string, corpus?: string, model_files_sha256?: string,
 *   match_min_score?: import('../match/threshold.js').MatchThreshold, expansion?: import('./ad-expansion.js').ExpansionRecord}>}
 */
export function readIndexed(model) {
  try {
    return JSON.parse(fs.readFileSync(path.join(modelDirOf(model), INDEXED_FILE), 'utf8'));
  } catch {
    return {};
  }
}

/**
 * Records the layout a collection was (or is being) indexed with.
 * @param {string} model
 * @param {string} collection
 * @param {VectorLayout} layout
 * @param {string} [corpusSha256]
 * @param {string} [corpusPath] the corpus file (absolute), so that an activation refused for lack of this
 *   collection can name the command that indexes it into another model
 * @param {string} [modelFilesSha256] modelFilesDigest() of the model files the documents were embedded with
 */
export function recordIndexed(model, collection, layout, corpusSha256, corpusPath, modelFilesSha256) {
  const all = readIndexed(model);
  all[collection] = indexedEntry(layout, corpusSha256, corpusPath, modelFilesSha256);
  writeFileAtomic(path.join(modelDirOf(model), INDEXED_FILE), JSON.stringify(all, null, 2) + '\n');
}

/**
 * @param {VectorLayout} layout
 * @param {string} [corpusSha256]
 * @param {string} [corpusPath]
 * @param {string} [modelFilesSha256]
 */
function indexedEntry(layout, corpusSha256, corpusPath, modelFilesSha256) {
  return {
    layout, indexed_at: new Date().toISOString(),
    ...(corpusSha256 ? { corpus_sha256: corpusSha256 } : {}), ...(corpusPath ? { corpus: corpusPath } : {}),
    ...(modelFilesSha256 ? { model_files_sha256: modelFilesSha256 } : {}),
  };
}

/**
 * Records the layout a collection was indexed with where the model's backend keeps it (layoutRecords).
 * @param {import('../store/index.js').StoreBackend} store the model's store
 * @param {string} collection
 * @param {VectorLayout} layout
 * @param {string} [corpusSha256]
 * @param {string} [corpusPath]
 * @param {string} [modelFilesSha256] modelFilesDigest() of the model files the documents were embedded with
 */
export async function recordCollectionLayout(store, collection, layout, corpusSha256, corpusPath, modelFilesSha256) {
  await layoutRecords(store).record(collection, indexedEntry(layout, corpusSha256, corpusPath, modelFilesSha256));
}

/**
 * Records the layout documents were just written to a collection with, when none is recorded yet (a derived threshold
 * recorded before is kept): a collection written through the API or by a bulk job keeps that layout from then on.
 * @param {import('../store/index.js').StoreBackend} store the model's store
 * @param {string} collection
 * @param {VectorLayout} layout
 * @returns {Promise<boolean>} whether it recorded
 */
export async function recordLayoutIfNone(store, collection, layout) {
  const rec = layoutRecords(store);
  const existing = (await rec.read())[collection];
  if (existing?.layout) return false;
  await rec.record(collection, { ...(existing ?? {}), ...indexedEntry(layout) });
  return true;
}

/**
 * The layouts recorded for a model's collections, from where its backend keeps them.
 * @param {string} model
 * @param {{store: Config['store']}} config
 * @param {import('../store/index.js').StoreBackend} [store] the model's store when the caller has it open (else opened here)
 * @returns {Promise<Record<string, {layout: VectorLayout, indexed_at: string, corpus_sha256?: string, corpus?: string, model_files_sha256?: string}>>}
 */
export async function readLayoutsOf(model, config, store) {
  const all = await readRecordsOf(model, config, store);
  // A collection written through the API and precomputed has a threshold recorded but no layout.
  return Object.fromEntries(Object.entries(all).filter(([, e]) => e && typeof e === 'object' && 'layout' in e));
}

/**
 * Every collection's record (layout and derived match threshold), from where the model's backend keeps them.
 * @param {string} model
 * @param {{store: Config['store']}} config
 * @param {import('../store/index.js').StoreBackend} [open] the model's store when the caller has it open
 * @returns {Promise<Record<string, any>>}
 */
export async function readRecordsOf(model, config, open) {
  if (open) return layoutRecords(open).read();
  // A native model without a store folder has nothing to open (and opening would create it): its file is read.
  const store = mayHaveModelStore(model, config) ? await openModelStore(model, config) : null;
  try {
    return await layoutRecords(store ?? { backend: 'native', model }).read();
  } finally {
    await store?.close();
  }
}


/**
 * Refuse a model whose files on this host differ from those a collection was indexed with: its queries (or the
 * documents a worker embeds) would land in another space than the stored vectors, and every score would be
 * meaningless without any error. Each host needs the same models/<name>/ (a shared path or a copy of the folder).
 * Entries without a digest (indexed by an older version) are not checked.
 * @param {string} model
 * @param {Record<string, {model_files_sha256?: string}>} indexed layout entries by collection
 * @throws SCDV_MODEL_FILES_MISMATCH with both digests and the folder to copy
 */
export async function checkModelFiles(model, indexed) {
  const recorded = Object.entries(indexed).filter(([, e]) => typeof e.model_files_sha256 === 'string');
  if (!recorded.length) return;
  const local = await modelFilesDigest(model);
  const bad = recorded.find(([, e]) => e.model_files_sha256 !== local);
  if (!bad) return;
  const [collection, entry] = bad;
  const err = errors.MODEL_FILES_MISMATCH(model, local, collection, String(entry.model_files_sha256), model);
  err.details = { model, collection, local_sha256: local, indexed_sha256: entry.model_files_sha256, folder: modelDirOf(model) };
  throw err;
}

/**
 * Removes a collection's entry (after the collection was deleted); no file is written when it has none.
 * @param {string} model
 * @param {string} collection
 */
export function forgetIndexed(model, collection) {
  const all = readIndexed(model);
  if (!(collection in all)) return;
  delete all[collection];
  writeFileAtomic(path.join(modelDirOf(model), INDEXED_FILE), JSON.stringify(all, null, 2) + '\n');
}

/**
 * Where the layouts of a model's collections are recorded: the one place that decides it by backend. The native
 * store keeps them in models/<name>/indexed.json (this module's file); a shared backend keeps them itself
 * (OpenSearch: each index's `_meta`), so that every host serving the model sees the same record.
 * @param {Pick<import('../store/index.js').StoreBackend, 'backend' | 'model' | 'readLayouts' | 'recordLayout'>} store the model's store
 * @returns {{read: () => Promise<Record<string, any>>, record: (collection: string, entry: Record<string, any> | null) => Promise<void>}}
 */
export function layoutRecords(store) {
  const { readLayouts, recordLayout } = store;
  if (store.backend !== 'native' && readLayouts && recordLayout) {
    return { read: () => readLayouts.call(store), record: (collection, entry) => recordLayout.call(store, collection, entry) };
  }
  const model = store.model;
  return {
    read: async () => readIndexed(model),
    record: async (collection, entry) => {
      const all = readIndexed(model);
      if (entry === null && !(collection in all)) return;
      if (entry === null) delete all[collection];
      else all[collection] = /** @type {any} */ (entry);
      writeFileAtomic(path.join(modelDirOf(model), INDEXED_FILE), JSON.stringify(all, null, 2) + '\n');
    },
  };
}

/**
 * Deletes a collection of a model: from its store (see Store.dropCollection; SCDV_COLLECTION_NOT_FOUND when
 * absent) and from the model's record of indexed layouts.
 * @param {import('../store/index.js').StoreBackend} store the model's store (openModelStore(model, config))
 * @param {string} model
 * @param {string} collection
 */
export async function dropModelCollection(store, model, collection) {
  await store.dropCollection(validateCollectionName(collection));
  if (store.model !== model) throw new Error(`dropModelCollection: the store is model ${store.model}'s, not ${model}'s`);
  await layoutRecords(store).record(collection, null);
  // An expanded ad collection's own vectors go with it (pipeline/match/expand.js).
  const own = ownCollectionOf(collection);
  if (!isOwnCollection(collection) && (await store.collectionInfo(own))) {
    await store.dropCollection(own);
    await layoutRecords(store).record(own, null);
  }
}

/**
 * What differs between the layout a collection was indexed with and `layout` ('' when they agree, or when
 * nothing is recorded for the collection).
 * @param {string} model
 * @param {string} collection
 * @param {VectorLayout} layout
 * @param {{store: Config['store']}} config
 * @param {import('../store/index.js').StoreBackend} [store] the model's store when the caller has it open
 */
export async function indexedLayoutDifference(model, collection, layout, config, store) {
  const recorded = (await readLayoutsOf(model, config, store))[collection];
  return recorded ? layoutDifference(recorded.layout, layout) : '';
}
