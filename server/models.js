// Which model the server answers with, and switching it without dropping a request.
//
// A ServingModel bundles a model's embedder (the one text -> vector implementation) with its store
// (storeDir()/<model>/). A request takes the current ServingModel once, at its start, and uses it to the end,
// so an activation never changes the model under a request; the replaced model stays loaded as `previous`
// (instant rollback) and is closed only once no request holds it.
//
// The active model is recorded in dataDir()/server/active-model.json. Every server process polls that file,
// so an activation received by one process of `scdv serve --workers N` is followed by all of them.
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, modelsDir } from '../pipeline/paths.js';
import { errors } from '../pipeline/errors.js';
import { writeFileAtomic } from '../pipeline/fsutil.js';
import { createEmbedder } from '../pipeline/embed/index.js';
import { INDEXED_FILE, layoutDifference, readIndexed } from '../pipeline/embed/layout.js';
import { MODEL_FORMAT } from '../pipeline/model/names.js';
import { dropModelCollection } from '../pipeline/embed/layout.js';
import { storeDirFor, validateModelName } from '../pipeline/paths.js';
import { openStore } from '../pipeline/store/index.js';
import { validateCollectionName } from '../pipeline/store/names.js';

/** @typedef {import('../pipeline/config.js').Config} Config */
/** @typedef {ReturnType<typeof openStore>} Store */
/** @typedef {ReturnType<Store['collection']>} Collection */

/** The file every server process follows. */
export const activeModelFile = () => path.join(dataDir(), 'server', 'active-model.json');

/**
 * @typedef {object} ActiveRecord
 * @property {string} model
 * @property {string | null} previous
 * @property {string} activated_at ISO 8601
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
function writeActiveRecord(r) {
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
 * @returns {{name: string, width: number, count: number}[]}
 */
export function storeCollections(model) {
  const dir = storeDirFor(model);
  if (!fs.existsSync(dir)) return [];
  const store = openStore(dir);
  try {
    return store.listCollections();
  } finally {
    void store.close();
  }
}

/**
 * The model to serve at start: `explicit` (a flag), else the active-model file, else server.model, else the
 * newest model whose store holds documents, else the newest model. Recorded in the file when it changes
 * (unless `record` is false: commands that only read, such as `scdv precompute`).
 * @param {string | undefined} explicit
 * @param {Config} config
 * @param {{record?: boolean}} [opts]
 * @returns {string}
 */
export function resolveModelName(explicit, config, opts = {}) {
  const record = readActiveRecord();
  let name = explicit ?? record?.model ?? config.server.model ?? null;
  if (!name) {
    const models = listModels();
    if (!models.length) throw errors.MODEL_NOT_FOUND('(any)', `${modelsDir()}: train one with \`scdv train\``);
    name = (models.find((m) => storeCollections(m.name).some((c) => c.count > 0)) ?? models[0]).name;
  }
  validateModelName(name);
  if (!listModels().some((m) => m.name === name)) throw errors.MODEL_NOT_FOUND(name, modelsDir());
  if ((opts.record ?? true) && (!record || record.model !== name)) {
    const previous = record && record.model !== name ? record.model : record?.previous ?? null;
    writeActiveRecord({ model: name, previous, activated_at: new Date().toISOString() });
  }
  return name;
}

/**
 * The embedding settings requests must use for a model: those its collections were indexed with (recorded by
 * `scdv index` in models/<name>/indexed.json), so that a query vector always has the layout of the vectors it
 * is compared with, whatever the server's own config says. Collections indexed with different settings cannot
 * all be served by one embedder: then the config's settings stay, and the others are named in a warning.
 * @param {string} name
 * @param {Config['embed']} configured
 * @param {{warn?: (o: any, m?: string) => void, info: (o: any, m?: string) => void}} [log]
 * @returns {Config['embed']}
 */
export function servingEmbedConfig(name, configured, log) {
  const recorded = Object.entries(readIndexed(path.join(modelsDir(), validateModelName(name))));
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

export class ServingModel {
  /**
   * @param {string} name
   * @param {import('../pipeline/embed/index.js').Embedder} embedder
   * @param {Store} store
   */
  constructor(name, embedder, store) {
    this.name = name;
    this.embedder = embedder;
    this.store = store;
    this.width = embedder.width; // K·d, plus the vocabulary in the hybrid layout (embed.hybrid.alpha < 1)
    this.createdAt = String(embedder.model.manifest.created_at ?? '');
    /** Requests using this model right now. */
    this.refs = 0;
    this.retired = false;
    this.closed = false;
  }

  /**
   * @param {string} name
   * @param {Config} config
   * @param {{warn?: (o: any, m?: string) => void, info: (o: any, m?: string) => void}} [log]
   */
  static async open(name, config, log) {
    const embed = servingEmbedConfig(name, config.embed, log);
    const embedder = await createEmbedder(validateModelName(name), embed === config.embed ? config : { ...config, embed });
    let store;
    try {
      store = openStore(storeDirFor(name));
    } catch (err) {
      embedder.model.wordTopics.close();
      throw err;
    }
    return new ServingModel(name, embedder, store);
  }

  /**
   * An existing collection, or 404 (SCDV_COLLECTION_NOT_FOUND). Creates nothing.
   * @param {string} name
   * @returns {Collection}
   */
  collection(name) {
    return this.store.collection(validateCollectionName(name));
  }

  /**
   * A collection to write to, with the model's width: created on disk by its first written document (a
   * refused write leaves nothing behind).
   * @param {string} name
   */
  writableCollection(name) {
    return this.store.collection(validateCollectionName(name), { width: this.width });
  }

  /**
   * Deletes a collection of this model: its store folder, and its entry in models/<name>/indexed.json
   * (404 when the store has no such collection).
   * @param {string} name
   */
  async dropCollection(name) {
    await dropModelCollection(this.store, this.name, name);
  }

  /** @returns {{name: string, width: number, count: number}[]} */
  collections() {
    return this.store.listCollections();
  }

  async close() {
    if (this.closed) return;
    this.closed = true;
    await this.store.close();
    this.embedder.model.wordTopics.close();
  }
}

export class ModelState {
  /**
   * @param {{config: Config, log: {info: (o: any, m?: string) => void, error: (o: any, m?: string) => void}}} opts
   */
  constructor(opts) {
    this.config = opts.config;
    this.log = opts.log;
    /** @type {ServingModel | null} */
    this.current = null;
    /** @type {ServingModel | null} */
    this.previous = null;
    /** @type {string | null} name of a model being activated by this process */
    this.activating = null;
    /** @type {NodeJS.Timeout | null} */
    this.timer = null;
    this.fileStamp = '';
    /** Serialises switches (API activations and file-driven ones). */
    this.chain = Promise.resolve();
  }

  /**
   * Load the model to serve (see resolveModelName) and record it as active.
   * @param {string} [explicit]
   */
  async start(explicit) {
    const name = resolveModelName(explicit, this.config);
    this.current = await ServingModel.open(name, this.config, this.log);
    this.fileStamp = this.stamp();
    return this.current;
  }

  /** A request's model: held until release(). */
  acquire() {
    const sm = /** @type {ServingModel} */ (this.current);
    sm.refs++;
    return sm;
  }

  /** @param {ServingModel} sm */
  release(sm) {
    sm.refs--;
    if (sm.retired && sm.refs === 0) void sm.close();
  }

  /**
   * Switch to `name` (loaded, or loaded now). With `check`, refuse when its store lacks a collection that
   * the current model serves: answering 404s after a switch would be worse than refusing it.
   * @param {string} name
   * @param {{check?: boolean, record?: boolean}} [opts]
   * @returns {Promise<{active: string, previous: string | null, changed: boolean}>}
   */
  async activate(name, opts = {}) {
    validateModelName(name);
    if (this.activating) throw errors.MODEL_CHANGING(this.activating);
    this.activating = name;
    try {
      const run = this.chain.then(() => this.switchTo(name, opts.check ?? true, opts.record ?? true));
      this.chain = run.then(() => {}, () => {});
      return await run;
    } finally {
      this.activating = null;
    }
  }

  /**
   * @param {string} name
   * @param {boolean} check
   * @param {boolean} record
   */
  async switchTo(name, check, record) {
    const cur = /** @type {ServingModel} */ (this.current);
    if (cur.name === name) {
      if (record) this.record(cur.name, this.previous?.name ?? readActiveRecord()?.previous ?? null);
      return { active: name, previous: this.previous?.name ?? null, changed: false };
    }
    if (!listModels().some((m) => m.name === name)) throw errors.MODEL_NOT_FOUND(name, 'the models folder');
    const reuse = this.previous?.name === name && !this.previous.closed;
    const next = reuse ? /** @type {ServingModel} */ (this.previous) : await ServingModel.open(name, this.config, this.log);
    try {
      if (check) {
        // An empty collection serves nothing: the new model need not have it (older versions left empty
        // collections behind after refused writes).
        const have = new Set(next.collections().map((c) => c.name));
        const missing = cur.collections().filter((c) => c.count > 0 && !have.has(c.name)).map((c) => c.name);
        if (missing.length) throw errors.MODEL_NOT_BUILT(name, missing.join(', '), cur.name, name);
      }
    } catch (err) {
      if (!reuse) await next.close();
      throw err;
    }
    // The swap itself: one assignment. Requests already running keep the model they took.
    const old = this.previous;
    this.previous = cur;
    this.current = next;
    next.retired = false;
    if (old && old !== next) {
      old.retired = true;
      if (old.refs === 0) await old.close();
    }
    if (record) this.record(name, cur.name);
    this.log.info({ model: name, previous: cur.name }, 'model activated');
    return { active: name, previous: cur.name, changed: true };
  }

  /**
   * @param {string} model
   * @param {string | null} previous
   */
  record(model, previous) {
    writeActiveRecord({ model, previous, activated_at: new Date().toISOString() });
    this.fileStamp = this.stamp();
  }

  stamp() {
    try {
      const st = fs.statSync(activeModelFile());
      return `${st.mtimeMs}:${st.size}:${st.ino}`;
    } catch {
      return '';
    }
  }

  /** Follow activations made by other processes (and by `scdv` commands) through the file. */
  watch() {
    this.timer = setInterval(() => {
      const stamp = this.stamp();
      if (stamp === this.fileStamp || this.activating) return;
      this.fileStamp = stamp;
      const r = readActiveRecord();
      if (!r || r.model === this.current?.name) return;
      this.activating = r.model;
      const run = this.chain.then(() => this.switchTo(r.model, false, false));
      this.chain = run.then(() => {}, () => {});
      run.catch((err) => this.log.error({ model: r.model, err: err.message }, 'cannot follow the model activated in the active-model file'))
        .finally(() => { this.activating = null; });
    }, this.config.server.modelPollMs);
    this.timer.unref();
  }

  async close() {
    if (this.timer) clearInterval(this.timer);
    await this.chain;
    await Promise.all([this.current?.close(), this.previous?.close()]);
  }
}
