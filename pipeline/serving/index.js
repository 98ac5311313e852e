// Which model serves, and with which embed settings each collection of a model was indexed: the decisions the
// server, the CLI, `scdv index`, eval, inspect and the demo share (server/models.js keeps only the server's
// runtime state: the loaded models and the switch between them).
//
// The active model is recorded in dataDir()/server/active-model.json; every server process follows that file.
// The settings a collection was indexed with are recorded by `scdv index` in the model folder:
//   models/<name>/indexed.json: { "<collection>": { "layout": VectorLayout, "indexed_at": ISO 8601, "corpus_sha256": "…",
//                                  "corpus": "/absolute/path.jsonl" }, … }  (corpus: since issue 14; older entries lack it)
// A query must be embedded with the layout of the vectors it is compared with (a hybrid and a pure SCDV
// vector, or two hybrid vectors of different α, do not mix).
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, modelsDir, validateModelName } from '../paths.js';
import { errors } from '../errors.js';
import { writeFileAtomic } from '../fsutil.js';
import { layoutDifference } from '../embed/layout.js';
import { MODEL_FORMAT } from '../model/names.js';
import { mayHaveModelStore, openModelStore, validateCollectionName } from '../store/index.js';

/** @typedef {import('../config.js').Config} Config */
/** @typedef {import('../embed/layout.js').VectorLayout} VectorLayout */
/** @typedef {{warn?: (o: any, m?: string) => void, info: (o: any, m?: string) => void}} ServingLog */

// ---- which model serves ----

/** The file every server process follows. */
export const activeModelFile = () => path.join(dataDir(), 'server', 'active-model.json');

/**
 * @typedef {object} ActiveRecord
 * @property {string} model
 * @property {string | null} previous
 * @property {string} activated_at ISO 8601
 * @property {string[]} [collections] the collections the activation was asked to keep serving (`{"collections"}`
 *   of the activate body); absent when it kept every collection the previous model served
 * @property {string[]} [unserved] collections with documents the previous model served that this one lacks
 */

/** @returns {ActiveRecord | null} */
export function readActiveRecord() {
  try {
    const r = JSON.parse(fs.readFileSync(activeModelFile(), 'utf8'));
    return typeof r?.model === 'string' ? r : null;
  } catch {
    return null;
  }
}

/** @param {ActiveRecord} r */
export function writeActiveRecord(r) {
  fs.mkdirSync(path.dirname(activeModelFile()), { recursive: true });
  writeFileAtomic(activeModelFile(), JSON.stringify(r, null, 2) + '\n');
}

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
 * Collections of a model's store without keeping it open ([] when it has no store yet).
 * @param {string} model
 * @param {{store: Config['store']}} config
 * @returns {Promise<{name: string, width: number, count: number}[]>}
 */
export async function storeCollections(model, config) {
  if (!mayHaveModelStore(model, config)) return [];
  const store = await openModelStore(model, config);
  try {
    return await store.listCollections();
  } finally {
    await store.close();
  }
}

/**
 * The model to serve at start: `explicit` (a flag), else the active-model file, else server.model, else the
 * newest model whose store holds documents, else the newest model. Recorded in the file when it changes
 * (unless `record` is false: commands that only read, such as `scdv precompute`).
 * @param {string | undefined} explicit
 * @param {Config} config
 * @param {{record?: boolean}} [opts]
 * @returns {Promise<string>}
 */
export async function resolveModelName(explicit, config, opts = {}) {
  const record = readActiveRecord();
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
    writeActiveRecord({ model: name, previous, activated_at: new Date().toISOString() });
  }
  return name;
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
 * @param {{chosen?: string[], has: string[]}} opts
 */
export function activationRefused(current, next, missing, opts) {
  const indexed = readIndexed(current);
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

// ---- with which embed settings each collection was indexed ----

export const INDEXED_FILE = 'indexed.json';

/** @param {string} model */
const modelDirOf = (model) => path.join(modelsDir(), validateModelName(model));

/**
 * @param {string} model
 * @returns {Record<string, {layout: VectorLayout, indexed_at: string, corpus_sha256?: string, corpus?: string}>}
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
 */
export function recordIndexed(model, collection, layout, corpusSha256, corpusPath) {
  const all = readIndexed(model);
  all[collection] = {
    layout, indexed_at: new Date().toISOString(),
    ...(corpusSha256 ? { corpus_sha256: corpusSha256 } : {}), ...(corpusPath ? { corpus: corpusPath } : {}),
  };
  writeFileAtomic(path.join(modelDirOf(model), INDEXED_FILE), JSON.stringify(all, null, 2) + '\n');
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
 * Deletes a collection of a model: from its store (see Store.dropCollection; SCDV_COLLECTION_NOT_FOUND when
 * absent) and from the model's record of indexed layouts.
 * @param {import('../store/index.js').StoreBackend} store the model's store (openModelStore(model, config))
 * @param {string} model
 * @param {string} collection
 */
export async function dropModelCollection(store, model, collection) {
  await store.dropCollection(validateCollectionName(collection));
  forgetIndexed(model, collection);
}

/**
 * What differs between the layout a collection was indexed with and `layout` ('' when they agree, or when
 * nothing is recorded for the collection).
 * @param {string} model
 * @param {string} collection
 * @param {VectorLayout} layout
 */
export function indexedLayoutDifference(model, collection, layout) {
  const recorded = readIndexed(model)[collection];
  return recorded ? layoutDifference(recorded.layout, layout) : '';
}

/**
 * The embed settings to compare texts with one collection: those it was indexed with when recorded, else
 * `configured`.
 * @param {string} model
 * @param {string | undefined} collection
 * @param {Config['embed']} configured
 * @returns {Config['embed']}
 */
export function collectionEmbedConfig(model, collection, configured) {
  const recorded = collection === undefined ? undefined : readIndexed(model)[collection];
  return recorded ? recorded.layout.embed : configured;
}

/**
 * The embedding settings requests must use for a model: those its collections were indexed with, so that a
 * query vector always has the layout of the vectors it is compared with, whatever the server's own config
 * says. Collections indexed with different settings cannot all be served by one embedder: then the config's
 * settings stay, and the others are named in a warning.
 * @param {string} name
 * @param {Config['embed']} configured
 * @param {ServingLog} [log]
 * @returns {Config['embed']}
 */
export function servingEmbedConfig(name, configured, log) {
  const recorded = Object.entries(readIndexed(name));
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
    `model ${name}: its collections were indexed with different embed settings; requests use the config's, and collections of another layout will refuse queries`);
  return configured;
}
