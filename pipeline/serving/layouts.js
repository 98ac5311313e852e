// Which model serves, and with which embed settings each collection of a model was indexed: the decisions the
// server, the CLI, `scdv index`, eval, inspect and the demo share (server/models.js keeps only the server's
// runtime state: the loaded models and the switch between them).
//
// The active model is recorded in one place every server process follows: dataDir()/server/active-model.json on
// the native backend, the shared Redis on OpenSearch (./active.js).
// The settings a collection was indexed with are recorded by `scdv index` in the model folder:
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
import { layoutDifference, newCollectionEmbed } from '../embed/layout.js';
import { MODEL_FORMAT } from '../model/names.js';
import { mayHaveModelStore, openModelStore, validateCollectionName } from '../store/index.js';
import { activeRecords } from './active.js';
import { modelFilesDigest } from '../model/files-digest.js';
import { deriveMatchThreshold } from '../match/threshold.js';

/** @typedef {import('../config.js').Config} Config */
/** @typedef {import('../embed/layout.js').VectorLayout} VectorLayout */
/** @typedef {{warn?: (o: any, m?: string) => void, info: (o: any, m?: string) => void}} ServingLog */
/** @typedef {import('./active.js').ActiveRecord} ActiveRecord */
/** @typedef {import('./active.js').ActiveRecords} ActiveRecords */

// ---- which model serves ----

export { activeModelFile, activeRecords } from './active.js';

/**
 * Trained models in modelsDir() (complete ones: a manifest of the current format), newest first.
 * @returns {{name: string, created_at: string, manifest: Record<string, any>}[]}
 */
export function listModels() {
  let names = [];
  try {
    names = fs.readdirSync(modelsDir(), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
  const out = [];
  for (const name of names) {
    try {
      validateModelName(name);
      const manifest = JSON.parse(fs.readFileSync(path.join(modelsDir(), name, 'manifest.json'), 'utf8'));
      if (manifest.format === MODEL_FORMAT) out.push({ name, created_at: String(manifest.created_at ?? ''), manifest });
    } catch { /* temporary or foreign folder */ }
  }
  return out.sort((a, b) => b.created_at.localeCompare(a.created_at) || a.name.localeCompare(b.name));
}

/**
 * Collections of a model's store without keeping it open ([] when it has no store yet), each with its derived
 * match threshold when one is recorded.
 * @param {string} model
 * @param {{store: Config['store']}} config
 * @returns {Promise<{name: string, width: number, count: number, match_min_score?: import('../match/threshold.js').MatchThreshold}[]>}
 */
export async function storeCollections(model, config) {
  if (!mayHaveModelStore(model, config)) return [];
  const store = await openModelStore(model, config);
  try {
    const thresholds = await readMatchThresholds(store);
    return (await store.listCollections()).map((c) => (thresholds[c.name] ? { ...c, match_min_score: thresholds[c.name] } : c));
  } finally {
    await store.close();
  }
}

/**
 * The model to serve at start: `explicit` (a flag), else the active-model record, else server.model, else the
 * newest model whose store holds documents, else the newest model. Recorded as active when it changes (unless
 * `record` is false: commands that only read, such as `scdv precompute`).
 * @param {string | undefined} explicit
 * @param {Config} config
 * @param {{record?: boolean, records?: ActiveRecords}} [opts] records: the active-model record to use (default:
 *   activeRecords(config), opened and closed here)
 * @returns {Promise<string>}
 */
export async function resolveModelName(explicit, config, opts = {}) {
  // A command told which model, that records nothing, has no need of the record (nor of the shared Redis).
  if (explicit !== undefined && opts.record === false) {
    validateModelName(explicit);
    if (!listModels().some((m) => m.name === explicit)) throw errors.MODEL_NOT_FOUND(explicit, modelsDir());
    return explicit;
  }
  const records = opts.records ?? activeRecords(config);
  try {
    const record = await records.read();
    let name = explicit ?? record?.model ?? config.server.model ?? null;
    if (!name) {
      const models = listModels();
      if (!models.length) throw errors.MODEL_NOT_FOUND('(any)', `${modelsDir()}: train one with \`scdv train\``);
      for (const m of models) {
        if ((await storeCollections(m.name, config)).some((c) => c.count > 0)) { name = m.name; break; }
      }
      name ??= models[0].name;
    }
    validateModelName(name);
    if (!listModels().some((m) => m.name === name)) throw errors.MODEL_NOT_FOUND(name, modelsDir());
    if ((opts.record ?? true) && (!record || record.model !== name)) {
      const previous = record && record.model !== name ? record.model : record?.previous ?? null;
      await records.write({ model: name, previous, activated_at: new Date().toISOString() });
    }
    return name;
  } finally {
    if (!opts.records) await records.close();
  }
}

// ---- what an activation must keep serving ----

/**
 * The rule of activation, decided here: by default a new model must hold (with documents) every collection
 * with documents the active model serves, so that no served collection starts answering 404 unnoticed. An
 * activation that names `collections` asks for exactly those instead (each must hold documents in the new
 * model); the active model's other collections stop being served, deliberately, and are reported as
 * `unserved`. The new model serves every collection of its store either way.
 * @param {{name: string, collections: {name: string, count: number}[]}} current the active model
 * @param {{name: string, collections: {name: string, count: number}[]}} next the model to activate
 * @param {string[]} [chosen] the activate body's `collections`
 * @returns {{missing: string[], unserved: string[]}} missing: refuse the activation when not empty
 */
export function activationShortfall(current, next, chosen) {
  const has = new Set(next.collections.filter((c) => c.count > 0).map((c) => c.name));
  const served = current.collections.filter((c) => c.count > 0).map((c) => c.name);
  const required = chosen ?? served;
  return { missing: required.filter((c) => !has.has(c)), unserved: served.filter((c) => !has.has(c)) };
}

/**
 * The 409 of a refused activation: the rule it broke, the `scdv index` command for each missing collection
 * (with the corpus the active model's collection was indexed from, when recorded) and, by default, the
 * activate body that serves only the collections the new model has.
 * @param {string} current the active model
 * @param {string} next
 * @param {string[]} missing
 * @param {{chosen?: string[], has: string[], config: {store: Config['store']}}} opts config: where the layouts are recorded
 */
export async function activationRefused(current, next, missing, opts) {
  const indexed = await readLayoutsOf(current, opts.config);
  const commands = missing.map((c) => `scdv index --model ${next} --collection ${c} --corpus ${indexed[c]?.corpus ?? `<corpus of ${c}>`}`);
  const rule = opts.chosen
    ? 'the activation\'s "collections" names (each one named must hold documents in the new model)'
    : `model ${current} serves (an activation keeps every collection with documents the active model serves, so that none starts answering 404)`;
  const serveOnly = { collections: opts.has };
  const alternative = opts.chosen ? '' : `; or, to serve only the collections model ${next} has, activate it with the body ${JSON.stringify(serveOnly)}`;
  const err = errors.MODEL_NOT_BUILT(next, missing.join(', '), rule, commands.map((c) => `\`${c}\``).join(', '), alternative);
  err.details = { missing, commands, ...(opts.chosen ? {} : { serve_only: serveOnly }) };
  return err;
}

/**
 * Activation without a running server (`scdv activate --server local`): the same rule and the same 409 as the
 * server's (activationShortfall, activationRefused), checked against the stores, then the active-model record is
 * written; a server started later serves it, and running servers follow the record as they follow any activation.
 * @param {string} name
 * @param {Config} config
 * @param {{collections?: string[]}} [opts] collections: as the activate body's `collections`
 * @returns {Promise<{active: string, previous: string | null, changed: boolean, unserved?: string[]}>}
 */
export async function activateRecorded(name, config, opts = {}) {
  validateModelName(name);
  opts.collections?.forEach((c) => validateCollectionName(c));
  if (!listModels().some((m) => m.name === name)) throw errors.MODEL_NOT_FOUND(name, modelsDir());
  await checkModelFiles(name, await readLayoutsOf(name, config));
  const records = activeRecords(config);
  try {
    const record = await records.read();
    const current = record?.model ?? null;
    const nextCollections = await storeCollections(name, config);
    const servedNow = current && current !== name && listModels().some((m) => m.name === current) ? await storeCollections(current, config) : [];
    const { missing, unserved } = activationShortfall({ name: current ?? name, collections: servedNow }, { name, collections: nextCollections }, opts.collections);
    if (missing.length) {
      const has = nextCollections.filter((c) => c.count > 0).map((c) => c.name);
      throw await activationRefused(current ?? name, name, missing, { chosen: opts.collections, has, config });
    }
    const changed = current !== name;
    const previous = changed ? current : record?.previous ?? null;
    await records.write({ model: name, previous, activated_at: new Date().toISOString(), ...(opts.collections ? { collections: opts.collections, unserved } : {}) });
    return { active: name, previous, changed, ...(unserved.length ? { unserved } : {}) };
  } finally {
    await records.close();
  }
}

// ---- with which embed settings each collection was indexed ----

export const INDEXED_FILE = 'indexed.json';

/** @param {string} model */
const modelDirOf = (model) => path.join(modelsDir(), validateModelName(model));

/**
 * The native record of a model's collections (a collection written through the API and precomputed has a
 * match_min_score and no layout).
 * @param {string} model
 * @returns {Record<string, {layout: VectorLayout, indexed_at: string, corpus_sha256?: string, corpus?: string, model_files_sha256?: string,
 *   match_min_score?: import('../match/threshold.js').MatchThreshold}>}
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
async function readRecordsOf(model, config, open) {
  if (open) return layoutRecords(open).read();
  // A native model without a store folder has nothing to open (and opening would create it): its file is read.
  const store = mayHaveModelStore(model, config) ? await openModelStore(model, config) : null;
  try {
    return await layoutRecords(store ?? { backend: 'native', model }).read();
  } finally {
    await store?.close();
  }
}

// ---- the default min_score of each target collection (pipeline/match/threshold.js) ----

/**
 * The derived match thresholds of a model's collections, by collection (from the records of an open store, or
 * of the model's backend when `store` is a model name).
 * @param {Pick<import('../store/index.js').StoreBackend, 'backend' | 'model' | 'readLayouts' | 'recordLayout'> | string} store
 * @param {{store: Config['store']}} [config] with a model name
 * @returns {Promise<Record<string, import('../match/threshold.js').MatchThreshold>>}
 */
export async function readMatchThresholds(store, config) {
  const all = typeof store === 'string' ? await readRecordsOf(store, /** @type {{store: Config['store']}} */ (config)) : await layoutRecords(store).read();
  /** @type {Record<string, import('../match/threshold.js').MatchThreshold>} */
  const out = {};
  for (const [c, e] of Object.entries(all)) if (e?.match_min_score) out[c] = e.match_min_score;
  return out;
}

/**
 * Measures the default min_score of `target` against the pages of `source` (deriveMatchThreshold) and records it
 * beside the target's layout (null, nothing recorded: an empty collection).
 * @param {import('../store/index.js').StoreBackend} store the model's store
 * @param {string} source
 * @param {string} target
 * @param {{server: {matchThreshold: {quantile: number}}}} config
 */
export async function deriveAndRecordThreshold(store, source, target, config) {
  const t = await deriveMatchThreshold(await store.collection(source), await store.collection(target), { source, quantile: config.server.matchThreshold.quantile });
  if (!t) return null;
  const rec = layoutRecords(store);
  await rec.record(target, { ...((await rec.read())[target] ?? {}), match_min_score: t });
  return t;
}

/**
 * After `collection` was indexed: its own threshold against the default page collection (articles) when that
 * holds documents, and, when it is a page collection itself, the thresholds measured against it again.
 * @param {import('../store/index.js').StoreBackend} store
 * @param {string} collection
 * @param {string} defaultSource CLI_DEFAULTS.collection
 * @param {{server: {matchThreshold: {quantile: number}}}} config
 * @returns {Promise<Record<string, import('../match/threshold.js').MatchThreshold>>} the thresholds derived, by target
 */
export async function rederiveThresholds(store, collection, defaultSource, config) {
  const counts = new Map((await store.listCollections()).map((c) => [c.name, c.count]));
  /** @type {[string, string][]} source, target */
  const todo = [];
  if (collection !== defaultSource && (counts.get(defaultSource) ?? 0) > 0) todo.push([defaultSource, collection]);
  for (const [target, t] of Object.entries(await readMatchThresholds(store))) {
    if (t.source === collection && target !== collection && (counts.get(target) ?? 0) > 0) todo.push([collection, target]);
  }
  /** @type {Record<string, import('../match/threshold.js').MatchThreshold>} */
  const out = {};
  for (const [source, target] of todo) {
    const t = await deriveAndRecordThreshold(store, source, target, config);
    if (t) out[target] = t;
  }
  return out;
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

/**
 * The embed settings to compare texts with one collection: those it was indexed with when recorded, else those a
 * new collection of that name gets from the config (newCollectionEmbed: the ads' for an ad collection).
 * @param {string} model
 * @param {string | undefined} collection
 * @param {{embed: Config['embed'], adEmbed: Config['adEmbed'], store: Config['store']}} config used when none are recorded
 * @returns {Promise<Config['embed']>}
 */
export async function collectionEmbedConfig(model, collection, config) {
  const recorded = collection === undefined ? undefined : (await readLayoutsOf(model, config))[collection];
  return recorded ? recorded.layout.embed : collection === undefined ? config.embed : newCollectionEmbed(config.embed, config.adEmbed, collection);
}

/**
 * The one rule for the embed settings of documents written to (and texts compared with) a collection of a served
 * model: its recorded layout's; else, when it holds documents (written through the API by a version that recorded
 * nothing), the model's default, which they were embedded with; else a new collection's (newCollectionEmbed over
 * the model's default). The server's writes and its queued bulk jobs both decide here.
 * @param {{collection: string, recorded: VectorLayout | undefined, hasDocuments: boolean, modelDefault: Config['embed'], adEmbed: Config['adEmbed']}} o
 * @returns {{embed: Config['embed'], recorded: boolean}}
 */
export function servedCollectionEmbed(o) {
  if (o.recorded) return { embed: o.recorded.embed, recorded: true };
  return { embed: o.hasDocuments ? o.modelDefault : newCollectionEmbed(o.modelDefault, o.adEmbed, o.collection), recorded: false };
}

/**
 * servedCollectionEmbed for a model's collection, from the records and the store as they are now (a bulk job's).
 * @param {string} model
 * @param {string} collection
 * @param {Config} config
 */
export async function collectionWriteEmbed(model, collection, config) {
  const recorded = (await readLayoutsOf(model, config))[collection]?.layout;
  if (recorded) return recorded.embed;
  const store = mayHaveModelStore(model, config) ? await openModelStore(model, config) : null;
  let hasDocuments = false;
  try {
    hasDocuments = ((await store?.collectionInfo(collection))?.count ?? 0) > 0;
  } finally {
    await store?.close();
  }
  return servedCollectionEmbed({ collection, recorded, hasDocuments, modelDefault: await servingEmbedConfig(model, config), adEmbed: config.adEmbed }).embed;
}

/**
 * A model's default embed settings: those its page collections (every one but the ad collections, adEmbed.collections,
 * whose settings are their own) were indexed with, whatever the server's own config says, for a collection with no
 * recorded layout and the texts compared with it. Page collections indexed with different settings have no common
 * default: then the config's settings stay, and the others are named in a warning. A recorded collection is always
 * written to and queried with its own layout (server/models.js: one embedder per layout).
 * @param {string} name
 * @param {{embed: Config['embed'], store: Config['store'], adEmbed?: Config['adEmbed']}} config its embed settings are the configured ones
 * @param {ServingLog} [log]
 * @returns {Promise<Config['embed']>}
 */
export async function servingEmbedConfig(name, config, log) {
  const configured = config.embed;
  const ads = config.adEmbed?.collections ?? [];
  const recorded = Object.entries(await readLayoutsOf(name, config)).filter(([c]) => !ads.includes(c));
  if (recorded.length === 0) return configured;
  const first = recorded[0][1].layout;
  const differing = recorded.filter(([, r]) => layoutDifference(r.layout, first) !== '');
  if (differing.length === 0) {
    if (layoutDifference({ ...first, embed: configured }, first) !== '') {
      log?.info({ model: name }, `model ${name}: embedding requests with the settings its collections were indexed with (models/${name}/${INDEXED_FILE}), not the config's`);
    }
    return first.embed;
  }
  (log?.warn ?? log?.info)?.({ model: name, collections: recorded.map(([c]) => c) },
    `model ${name}: its page collections were indexed with different embed settings; each is written to and queried with its own, and a new collection gets the config's`);
  return configured;
}
