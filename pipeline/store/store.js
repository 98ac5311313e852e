// Store: a folder of collections, each in its own sub-folder.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { errors } from '../errors.js';
import { Collection } from './collection.js';
import { DEFAULT_ENGINE_OPTIONS, NativeEngine } from './engine.js';
import { fsyncDir, sameFile } from './files.js';
import { loadAddon } from './native.js';
import { lockAsync, whenFree } from './process-locks.js';
import { validateCollectionName } from './names.js';
import { ENGINE_SCHEMA } from '../config/schema.js';
import { describeRule, inRange, rangeOf } from '../config/describe.js';

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
    } else {
      // A number: the range of the option in the config schema (pipeline/config/schema/engine.js).
      const schema = ENGINE_SCHEMA.properties[key];
      const range = rangeOf(schema);
      if (!range || !inRange(v, range)) throw bad(`must be ${describeRule(schema)}, got ${JSON.stringify(v)}`);
    }
    out[key] = v;
  }
  return /** @type {Partial<import('./engine.js').EngineOptions>} */ (out);
}

/** A dropped collection's folder is renamed to this prefix (never a valid collection name), then removed. */
const TOMBSTONE_PREFIX = '.dropped-';

/** @param {string} dir */
function removeTombstone(dir) {
  try {
    fs.rmSync(dir, { recursive: true, force: true });
  } catch { /* another process is removing it too; whoever is last finishes the job */ }
}

export class Store {
  /** @type {string} */ #dir;
  /** @type {Partial<import('./engine.js').EngineOptions>} */ #defaults;
  /** @type {Map<string, Collection>} */ #collections = new Map();
  /** @type {Map<string, import('./engine.js').NativeEngine>} */ #engines = new Map();
  /** @type {Map<string, Promise<void>>} drops under way in this process, by collection name */ #dropping = new Map();
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
    // Tombstones of drops that did not finish (the process died between the rename and the removal).
    for (const f of fs.readdirSync(this.#dir)) if (f.startsWith(TOMBSTONE_PREFIX)) removeTombstone(path.join(this.#dir, f));
  }

  /** @returns {string} */
  get dir() { return this.#dir; }
  /** @returns {'native'} which backend this is (the contract's `backend`) */
  get backend() { return 'native'; }
  /** @returns {string} the model whose store this is (the folder's name: storeDirFor(model)) */
  get model() { return path.basename(this.#dir); }

  /**
   * The embedded store is up whenever this process is.
   * @returns {import('./contract.js').BackendHealth}
   */
  health() {
    return { ok: true, backend: 'native' };
  }

  /**
   * A collection. The same object is returned for the same name; many processes may open one at once.
   *  - store.collection(name): an existing collection, else SCDV_COLLECTION_NOT_FOUND. Creates nothing.
   *  - store.collection(name, { width }): a collection to write to. When it does not exist yet, nothing is
   *    created now: it reads as empty, and its first upsert that writes a document creates it on disk.
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
    const engine = this.#engines.get(name);
    if (engine && !engine.present()) {
      // Dropped by another process: forget it; the name may now be created anew.
      this.#engines.delete(name);
      this.#collections.delete(name);
      void engine.close();
    }
    const cached = this.#collections.get(name);
    if (cached) {
      let exists;
      try {
        exists = cached.createdAt !== null;
      } catch (err) {
        // Locked by a write or a drop of this process (see below): the handle's own writes wait for that.
        if (width === undefined || width !== cached.width || /** @type {any} */ (err)?.code !== 'SCDV_STORE_BUSY') throw err;
        return cached;
      }
      if (width === undefined && !exists) throw this.#notFound(name);
      if (width !== undefined && width !== cached.width) {
        if (exists) throw errors.STORE_WIDTH_MISMATCH(name, String(cached.width), String(width));
        this.#collections.delete(name); // never written: a width asked before binds nothing
      } else {
        return cached;
      }
    }
    /** @type {import('./engine.js').EngineOptions} */
    const opts = { ...DEFAULT_ENGINE_OPTIONS, ...this.#defaults, ...overrides };
    /** @type {import('./collection.js').EngineOpener} */
    const open = (create) => {
      if (this.#closed) throw errors.STORE_CLOSED(this.#dir);
      const known = this.#engines.get(name);
      if (known) return known;
      // While this process drops the name it reads as absent, and a write waits for the drop (see ready).
      if (this.#dropping.has(name)) {
        if (!create) return null;
        throw errors.STORE_BUSY(name, path.basename(this.#dir));
      }
      const dir = path.join(this.#dir, name);
      if (!create && !fs.existsSync(path.join(dir, 'CURRENT'))) return null;
      let e;
      try {
        e = new NativeEngine(dir, name, width, opts, create);
      } catch (err) {
        if (!create && /** @type {any} */ (err)?.code === 'SCDV_COLLECTION_NOT_FOUND') return null;
        throw err;
      }
      this.#engines.set(name, e);
      return e;
    };
    /** @type {import('./engine.js').NativeEngine | null} */
    let e;
    try {
      e = open(false);
    } catch (err) {
      // Locked by a write or a drop of this process (an open to read never is: engine.js): a collection to write
      // to is opened on its first write, which waits for that (ready).
      if (width === undefined || /** @type {any} */ (err)?.code !== 'SCDV_STORE_BUSY') throw err;
      e = null;
    }
    if (!e && width === undefined) throw this.#notFound(name);
    const ready = width === undefined ? null : () => this.#settled(name);
    const c = new Collection(name, e?.width ?? /** @type {number} */ (width), open, e, ready);
    this.#collections.set(name, c);
    return c;
  }

  /**
   * Resolves once no drop of `name` runs in this process and nothing of this process holds its LOCK: then
   * opening it does not meet SCDV_STORE_BUSY (unless another write or drop began meanwhile).
   * @param {string} name
   */
  async #settled(name) {
    for (let d = this.#dropping.get(name); d; d = this.#dropping.get(name)) await d;
    await whenFree(path.join(this.#dir, name, 'LOCK'));
  }

  /** @param {string} name */
  #notFound(name) {
    return errors.COLLECTION_NOT_FOUND(name, path.basename(this.#dir));
  }

  /**
   * Collections in the folder (opened on the way, to count them). A collection exists from its first written
   * document until it is dropped; one whose documents were all deleted is listed with count 0.
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
      try {
        const c = this.collection(name);
        out.push({ name, width: c.width, count: c.count() });
      } catch (err) {
        if (/** @type {any} */ (err)?.code !== 'SCDV_COLLECTION_NOT_FOUND') throw err; // dropped meanwhile
      }
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * Deletes a collection and its files (SCDV_COLLECTION_NOT_FOUND when there is none). This process's writes
   * already queued to it complete first. Holding the collection's LOCK (so no write of any process is half
   * done), the folder is renamed to a hidden tombstone — atomically gone for everyone — then removed.
   * Other processes that have it open find it gone at their next call (SCDV_COLLECTION_NOT_FOUND; a write
   * waiting for LOCK is refused, not applied), and store.collection() there no longer returns it: the name
   * can be created again, as a new, empty collection.
   * In this process, while the drop runs the name reads as absent, and a write through a handle opened with a
   * width (store.collection(name, { width }), before or during the drop) waits for it asynchronously and then
   * creates the collection anew, as a write sent after the drop would; nothing here waits for LOCK on the event
   * loop while this process holds it (process-locks.js).
   * @param {string} name
   * @returns {Promise<void>}
   */
  async dropCollection(name) {
    if (this.#closed) throw errors.STORE_CLOSED(this.#dir);
    validateCollectionName(name);
    // One drop of a name at a time in this process; writes to the name meanwhile wait for it (#settled).
    for (let d = this.#dropping.get(name); d; d = this.#dropping.get(name)) await d;
    const drop = this.#drop(name);
    const settled = drop.then(() => {}, () => {});
    this.#dropping.set(name, settled);
    try {
      await drop;
    } finally {
      if (this.#dropping.get(name) === settled) this.#dropping.delete(name);
    }
  }

  /** @param {string} name */
  async #drop(name) {
    const engine = this.#engines.get(name);
    this.#engines.delete(name);
    this.#collections.delete(name);
    if (engine) await engine.closeDropped();
    const dir = path.join(this.#dir, name);
    const addon = loadAddon();
    let fd;
    try {
      fd = fs.openSync(path.join(dir, 'LOCK'), fs.constants.O_RDWR);
    } catch (err) {
      if (/** @type {NodeJS.ErrnoException} */ (err)?.code === 'ENOENT') throw this.#notFound(name);
      throw err;
    }
    let tombstone;
    try {
      const release = await lockAsync(addon, fd);
      try {
        // Dropped by another process while we waited, or a folder that never became a collection.
        if (!sameFile(fd, path.join(dir, 'LOCK')) || !fs.existsSync(path.join(dir, 'CURRENT'))) throw this.#notFound(name);
        tombstone = path.join(this.#dir, `${TOMBSTONE_PREFIX}${name}-${process.pid}-${randomBytes(4).toString('hex')}`);
        fs.renameSync(dir, tombstone);
        fsyncDir(this.#dir);
      } finally {
        release();
      }
    } finally {
      fs.closeSync(fd);
    }
    removeTombstone(tombstone);
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

  /**
   * What the store records of a collection, or null when it does not exist (never written, or dropped).
   * Creates nothing; the name is validated (SCDV_STORE_NAME_INVALID). A collection this store did not have open is
   * closed again after the answer: a caller that only asks (the index stage, before and after its workers write)
   * keeps none of its files open and does no background work on it meanwhile.
   * @param {string} name
   * @returns {{name: string, width: number, createdAt: string, count: number} | null} createdAt: collection.json's created_at
   */
  collectionInfo(name) {
    const wasOpen = this.#collections.has(name) || this.#engines.has(name);
    try {
      const c = this.collection(name);
      const createdAt = c.createdAt;
      return createdAt === null ? null : { name, width: c.width, createdAt, count: c.count() };
    } catch (err) {
      if (/** @type {any} */ (err)?.code === 'SCDV_COLLECTION_NOT_FOUND') return null; // absent, or dropped meanwhile
      throw err;
    } finally {
      if (!wasOpen) {
        const engine = this.#engines.get(name);
        this.#engines.delete(name);
        this.#collections.delete(name);
        void engine?.close();
      }
    }
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
