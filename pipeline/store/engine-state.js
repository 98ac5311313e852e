// What one NativeEngine knows about its collection folder, shared by the engine's parts: the options, the
// descriptors (LOCK, MERGE.lock, the live WAL), the loaded manifest, the WAL position, the flags of work in
// flight; plus the checks every call makes (open, not dropped), the LOCK discipline (withLock), background
// error reporting and the release of the files on close. Only engine.js and the engine-*.js files use it:
//   engine-view.js         brings the native View up to date (manifests, WAL tail) and repairs a torn WAL tail
//   engine-writes.js       the write queue and group commit (WAL appends)
//   engine-maintenance.js  flush, merge and clean-up of unreferenced files
import fs from 'node:fs';
import path from 'node:path';
import { errors, ScdvError } from '../errors.js';
import { loadAddon } from './native.js';
import { FORMAT, sameFile } from './files.js';
import { lockAsync } from './process-locks.js';
import { ENGINE_SCHEMA, defaultsOf } from '../config/schema.js';

/** Engine options (all have defaults: DEFAULT_ENGINE_OPTIONS). @typedef {import('../config/types.js').EngineOptions} EngineOptions */

/** The defaults of the engine's options: the schema's (pipeline/config/schema/engine.js, with the reasons). */
export const DEFAULT_ENGINE_OPTIONS = /** @type {Readonly<EngineOptions>} */ (Object.freeze(defaultsOf(ENGINE_SCHEMA)));

/**
 * @typedef {{kind: 'upsert', docs: import('./validate.js').PreparedDoc[]}
 *         | {kind: 'delete', ids: string[]}
 *         | {kind: 'flush', force: boolean}} WriteJob
 */

/** @typedef {{job: WriteJob, resolve: (v: any) => void, reject: (e: unknown) => void}} Pending */

/**
 * @param {unknown} err
 * @returns {boolean}
 */
export const isEnoent = (err) => /** @type {NodeJS.ErrnoException} */ (err)?.code === 'ENOENT';

/**
 * Native errors with code SCDV_STORE_CORRUPT or SCDV_STORE_FORMAT_UNSUPPORTED become catalogue errors.
 * @param {unknown} err
 * @param {string} where
 */
export function wrapNative(err, where) {
  const e = /** @type {Error & {code?: string, path?: string, found?: string, expected?: string}} */ (err);
  if (e && e.code === 'SCDV_STORE_CORRUPT' && !(e instanceof ScdvError)) return errors.STORE_CORRUPT(where, e.message).because(e);
  if (e && e.code === 'SCDV_STORE_FORMAT_UNSUPPORTED' && !(e instanceof ScdvError)) {
    // The addon names the segment and both versions as properties of the error (no message parsing).
    return (e.path ? errors.STORE_FORMAT_UNSUPPORTED(`${e.path} (segment)`, e.found ?? '?', e.expected ?? '?')
      : errors.STORE_FORMAT_UNSUPPORTED(where, '?', e.message)).because(e);
  }
  return err;
}

export class EngineState {
  addon = loadAddon();
  /** The native View: set by NativeEngine's constructor once the collection is open. */
  view = /** @type {import('./native.js').NativeView} */ (/** @type {unknown} */ (null));
  /** @type {number} */ width = 0;
  lockFd = -1;
  mergeFd = -1;
  /** collection.json's created_at */
  createdAt = '';
  /** Set once the collection is found dropped (see present()). */
  dropped = false;
  /** Set when this process dropped it (closeDropped): a write to the name then goes to the collection made anew. */
  droppedHere = false;
  closed = false;

  manifestName = '';
  /** @type {import('./files.js').Manifest} */ manifest = { format: FORMAT, generation: 0, wal: 0, segments: [] };
  /** The live WAL: its sequence, a read descriptor, a write descriptor (opened on the first append). */
  walSeq = 0;
  walFd = -1;
  walWriteFd = -1;
  /** End of the last whole record read or written; operations and time of the oldest one since the WAL began. */
  walOffset = 0;
  walOps = 0;
  walFirstTime = 0;
  /** True while this process appends to the WAL: its own refreshes must not read the half-acknowledged bytes. */
  appending = false;
  lastRefresh = 0;
  /** When present() last looked at LOCK on disk (ms). */
  presenceCheckedAt = 0;
  /** Bumped whenever the view changes (a new manifest, WAL records applied): see NativeEngine.version(). */
  version = 0;

  /** @type {Pending[]} writes waiting for the next group */ pending = [];
  /** A write group (engine-writes.js) is running. */
  writing = false;
  /** @type {Promise<void> | null} the merge running in this process */ merging = null;
  /** @type {NodeJS.Timeout | null} the maintenance timer */ timer = null;
  /** @type {string | null} */ lastBackgroundError = null;

  /** @type {() => void} */
  #onReleased = () => {};
  /** @type {Promise<void>} resolves once close() released every file */
  released = new Promise((resolve) => { this.#onReleased = resolve; });

  /**
   * @param {string} dir collection folder
   * @param {string} name
   * @param {EngineOptions} opts
   */
  constructor(dir, name, opts) {
    this.dir = dir;
    this.name = name;
    this.opts = opts;
  }

  notFound() {
    return errors.COLLECTION_NOT_FOUND(this.name, path.basename(path.dirname(this.dir)));
  }

  /**
   * False once the collection was dropped (by any process): its folder's LOCK is no longer the file this
   * engine holds. Looked at on every call (one stat); a dropped engine stays dropped.
   */
  present() {
    if (this.dropped) return false;
    this.presenceCheckedAt = Date.now();
    if (this.lockFd >= 0 && !sameFile(this.lockFd, path.join(this.dir, 'LOCK'))) this.dropped = true;
    return !this.dropped;
  }

  /**
   * present(), looked up on disk at most every refreshMs (two stat calls): for Store.collection(), which every
   * request calls. A drop by another process is seen within refreshMs, as its writes are.
   */
  presentRecently() {
    if (!this.dropped && Date.now() - this.presenceCheckedAt < this.opts.refreshMs) return true;
    return this.present();
  }

  /** Throws SCDV_COLLECTION_NOT_FOUND when the collection was dropped. */
  checkPresent() {
    if (!this.present()) {
      this.stopTimer();
      throw this.notFound();
    }
  }

  checkOpen() {
    if (this.dropped) throw this.notFound();
    if (this.closed) throw errors.STORE_CLOSED(this.dir);
  }

  stopTimer() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Runs fn holding LOCK: after this process's other holders of the same file (process-locks.js: flock does not
   * exclude another use of the same descriptor, and two descriptors of one process must not wait on each other on
   * the event loop), then across processes (a busy lock is waited for on the thread pool, not on the event loop).
   * @template T
   * @param {() => Promise<T>} fn
   * @returns {Promise<T>}
   */
  async withLock(fn) {
    const release = await lockAsync(this.addon, this.lockFd);
    try {
      // A drop renames the folder away holding LOCK: whoever gets the lock after it finds it gone.
      this.checkPresent();
      return await fn();
    } finally {
      release();
    }
  }

  /** @param {unknown} err */
  backgroundError(err) {
    if (!this.present()) return; // the collection was dropped: nothing left to report about it
    const e = err instanceof Error ? err : new Error(String(err));
    this.lastBackgroundError = `${new Date().toISOString()} ${e.message}`;
    if (this.opts.onBackgroundError) this.opts.onBackgroundError(e);
    else process.emitWarning(`scdv store ${this.dir}: background ${e.message}`, 'ScdvStoreWarning');
  }

  /** Once closed and no write group or merge runs any more: releases the files and resolves `released`. */
  maybeRelease() {
    if (this.closed && !this.writing && !this.merging && this.lockFd >= 0) {
      for (const fd of [this.walFd, this.walWriteFd, this.lockFd, this.mergeFd]) {
        if (fd >= 0) {
          try { fs.closeSync(fd); } catch { /* already closed */ }
        }
      }
      this.walFd = this.walWriteFd = this.lockFd = this.mergeFd = -1;
      this.view.close();
      this.#onReleased();
    }
  }
}
