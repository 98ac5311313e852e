// Store: a folder of collections, each in its own sub-folder.
import fs from 'node:fs';
import path from 'node:path';
import { errors } from '../errors.js';
import { Collection } from './collection.js';
import { DEFAULT_ENGINE_OPTIONS, NativeEngine } from './engine.js';
import { validateCollectionName } from './names.js';

/**
 * Options of openStore() (defaults for every collection) and of store.collection() (overrides).
 * @typedef {Partial<import('./engine.js').EngineOptions>} StoreOptions
 */

/**
 * @typedef {StoreOptions & {width?: number}} CollectionOptions
 */

/**
 * @param {Record<string, unknown>} o
 * @param {string} where
 * @returns {Partial<import('./engine.js').EngineOptions>}
 */
function checkOptions(o, where) {
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw errors.STORE_OPTION_INVALID(where, 'options must be an object');
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const [key, v] of Object.entries(o)) {
    if (key === 'width') continue;
    if (!(key in DEFAULT_ENGINE_OPTIONS)) throw errors.STORE_OPTION_INVALID(`${where}.${key}`, 'unknown option');
    const def = /** @type {Record<string, unknown>} */ (DEFAULT_ENGINE_OPTIONS)[key];
    const bad = (/** @type {string} */ why) => errors.STORE_OPTION_INVALID(`${where}.${key}`, why);
    if (key === 'onBackgroundError') {
      if (v !== null && typeof v !== 'function') throw bad('must be a function');
    } else if (key === 'tiers') {
      if (!Array.isArray(v) || v.length < 1 || v.length > 8 || v.some((x, i) => typeof x !== 'number' || !(x > 0 && x <= 1) || (i > 0 && x <= v[i - 1])) || v[v.length - 1] !== 1) {
        throw bad('must be 1 to 8 increasing shares in (0, 1], the last one 1');
      }
    } else if (typeof def === 'boolean') {
      if (typeof v !== 'boolean') throw bad('must be true or false');
    } else if (key === 'budget') {
      if (typeof v !== 'number' || !(v > 0 && v <= 1)) throw bad('must be a number in (0, 1]');
    } else if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || ((key === 'mergeFactor' || key === 'candidates' || key === 'flushDocs') && v < 1)) {
      throw bad('must be a non-negative integer');
    }
    out[key] = v;
  }
  if (typeof out.mergeFactor === 'number' && out.mergeFactor < 2) throw errors.STORE_OPTION_INVALID(`${where}.mergeFactor`, 'must be at least 2');
  return /** @type {Partial<import('./engine.js').EngineOptions>} */ (out);
}

export class Store {
  /** @type {string} */ #dir;
  /** @type {Partial<import('./engine.js').EngineOptions>} */ #defaults;
  /** @type {Map<string, Collection>} */ #collections = new Map();
  /** @type {Map<string, import('./engine.js').NativeEngine>} */ #engines = new Map();
  #closed = false;
  /** @type {Promise<void>} */ #closing = Promise.resolve();

  /**
   * @param {string} dir
   * @param {StoreOptions} [options]
   */
  constructor(dir, options = {}) {
    this.#dir = path.resolve(dir);
    this.#defaults = checkOptions(/** @type {Record<string, unknown>} */ (options), 'openStore');
    fs.mkdirSync(this.#dir, { recursive: true });
  }

  /** @returns {string} */
  get dir() { return this.#dir; }

  /**
   * Opens a collection, creating it when missing ({ width } is then required). The same object is returned
   * for the same name. Many processes may open the same collection at once.
   * @param {string} name /^[a-z0-9][a-z0-9_-]{0,63}$/
   * @param {CollectionOptions} [options] width (fixed at creation; a different one is an error) and engine options
   * @returns {Collection}
   */
  collection(name, options = {}) {
    if (this.#closed) throw errors.STORE_CLOSED(this.#dir);
    validateCollectionName(name);
    const overrides = checkOptions(/** @type {Record<string, unknown>} */ (options), `collection("${name}")`);
    const width = options.width;
    if (width !== undefined && (!Number.isInteger(width) || width < 1 || width > 0xffffffff)) {
      throw errors.STORE_OPTION_INVALID('width', `must be a positive integer, got ${String(width)}`);
    }
    const open = this.#collections.get(name);
    if (open) {
      if (width !== undefined && width !== open.width) throw errors.STORE_WIDTH_MISMATCH(name, String(open.width), String(width));
      return open;
    }
    /** @type {import('./engine.js').EngineOptions} */
    const opts = { ...DEFAULT_ENGINE_OPTIONS, ...this.#defaults, ...overrides };
    const engine = new NativeEngine(path.join(this.#dir, name), name, width, opts);
    const c = new Collection(engine);
    this.#engines.set(name, engine);
    this.#collections.set(name, c);
    return c;
  }

  /**
   * Collections in the folder (opened on the way, to count them).
   * @returns {{name: string, width: number, count: number}[]}
   */
  listCollections() {
    if (this.#closed) throw errors.STORE_CLOSED(this.#dir);
    const out = [];
    for (const e of fs.readdirSync(this.#dir, { withFileTypes: true })) {
      if (!e.isDirectory() || !fs.existsSync(path.join(this.#dir, e.name, 'CURRENT'))) continue;
      let name;
      try {
        name = validateCollectionName(e.name);
      } catch {
        continue;
      }
      const c = this.collection(name);
      out.push({ name, width: c.width, count: c.count() });
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * Closes every collection. Writes already queued still complete; the returned promise (which callers may
   * ignore) resolves when they have and every file is released.
   * @returns {Promise<void>}
   */
  close() {
    if (this.#closed) return this.#closing;
    this.#closed = true;
    this.#closing = Promise.all([...this.#engines.values()].map((e) => e.close())).then(() => {});
    this.#engines.clear();
    this.#collections.clear();
    return this.#closing;
  }
}

/**
 * Opens (creating if missing) a store folder.
 * @param {string} dir
 * @param {StoreOptions} [options] defaults for every collection (see EngineOptions)
 * @returns {Store}
 */
export function openStore(dir, options) {
  return new Store(dir, options);
}
