// NativeEngine: one process's handle on one collection folder. It owns the files (WAL, manifests, deletion
// bitmaps, segments), the cross-process locks and the background work (flush, merge); the native View
// (pipeline/store/native) holds the mapped segments and the WAL tail and does the searching.
//
// Concurrency model (see README.md):
//  - writers: any process. A write group takes the exclusive flock on LOCK, reads the WAL to its end
//    (truncating a torn tail left by a crashed writer), appends one record per call, fdatasyncs, releases.
//    Within a process, calls queue and are written together (group commit).
//  - readers: every search/get/count first calls refresh() (at most every refreshMs): CURRENT is re-read, and
//    the WAL's new bytes are decoded into the in-memory tail. A write is visible in every process within
//    refreshMs of its acknowledgement (immediately in the writing process).
//  - flush: under LOCK, the WAL becomes a segment; a new manifest (new WAL sequence) is published atomically.
//  - merge: MERGE.lock (one merge per collection at a time) for the long part, LOCK only to publish.
//  - files are unlinked only after a manifest without them is published; a reader that finds a file gone
//    re-reads CURRENT and retries; mapped files stay readable after unlink.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { errors, ScdvError } from '../errors.js';
import { loadAddon } from './native.js';
import {
  FORMAT, fsyncDir, manifestName, newlyDeleted, publishManifest, readCollectionInfo, readCurrent, readDeletions,
  readManifest, sameFile, walName, writeDeletions, writeFileDurable,
} from './files.js';
import { WAL_HEADER_BYTES, collapse, decodeHeader, decodeRecords, encodeDelete, encodeHeader, encodeUpsert, pack } from './wal.js';

const fsWrite = promisify(fs.write);
const fsDatasync = promisify(fs.fdatasync);

/**
 * Engine options (all have defaults; see DEFAULT_ENGINE_OPTIONS).
 * @typedef {object} EngineOptions
 * @property {number} flushDocs flush when the WAL holds this many operations
 * @property {number} flushAgeMs ... or when its oldest operation is this old
 * @property {number} refreshMs readers look at CURRENT and the WAL at most this often (on use)
 * @property {number} maintenanceMs period of the background check (refresh, age-based flush); 0 disables it
 * @property {boolean} autoFlush
 * @property {boolean} autoMerge
 * @property {number} maxSegments more segments than this trigger a background merge
 * @property {number} mergeFactor segments merged at once by the background policy (the smallest ones)
 * @property {number[]} tiers posting-list tiers of new segments (cumulative shares by |value|, ending with 1)
 * @property {number} minTierList posting lists shorter than this are not split into tiers
 * @property {number} budget default 'fast' search budget: share of the query's postings read
 * @property {number} candidates default 'fast' candidates rescored exactly per segment (at least 3k are)
 * @property {number} minPostings default 'fast' floor: postings read per segment whatever the budget
 * @property {((err: Error) => void) | null} onBackgroundError background flush/merge failures (default: process warning)
 */

/** @type {Readonly<EngineOptions>} */
export const DEFAULT_ENGINE_OPTIONS = Object.freeze({
  flushDocs: 5000,
  flushAgeMs: 3000,
  refreshMs: 100,
  maintenanceMs: 1000,
  autoFlush: true,
  autoMerge: true,
  maxSegments: 8,
  mergeFactor: 8,
  tiers: [0.05, 0.15, 0.35, 1],
  minTierList: 256,
  // 0.8: on real SCDV vectors (livedoor model) recall@10 at 100k documents is 0.910 at 0.3, 0.989 at 0.6 and
  // 0.999 at 0.7, but at 1M documents 0.7 gives 0.984-0.988, 0.75 0.996 and 0.8 0.999 (14 % more postings).
  budget: 0.8,
  candidates: 1000,
  minPostings: 100000,
  onBackgroundError: null,
});

/**
 * @typedef {object} EngineStats
 * @property {string} name
 * @property {number} width
 * @property {number} segments
 * @property {number} docs live documents
 * @property {number} deleted deleted documents still stored in segments (until merged away)
 * @property {number} bytes bytes of the segment files
 * @property {number} nnz non-zeros stored in segments (deleted documents included)
 * @property {{postings: number, total: number}} bytes_per_nnz
 * @property {{seq: number, docs: number, bytes: number}} wal operations in the live WAL file (not yet in segments)
 * @property {number} generation manifest generation
 * @property {import('./native.js').NativeSegmentStats[]} segmentDetails
 * @property {string | null} lastBackgroundError
 */

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
const isEnoent = (err) => /** @type {NodeJS.ErrnoException} */ (err)?.code === 'ENOENT';

/**
 * Native errors with code SCDV_STORE_CORRUPT or SCDV_STORE_FORMAT_UNSUPPORTED become catalogue errors.
 * @param {unknown} err
 * @param {string} where
 */
function wrapNative(err, where) {
  const e = /** @type {Error & {code?: string}} */ (err);
  if (e && e.code === 'SCDV_STORE_CORRUPT' && !(e instanceof ScdvError)) return errors.STORE_CORRUPT(where, e.message).because(e);
  if (e && e.code === 'SCDV_STORE_FORMAT_UNSUPPORTED' && !(e instanceof ScdvError)) {
    const m = /^segment (.*) has format version (\d+); this build reads version (\d+)$/.exec(e.message);
    return (m ? errors.STORE_FORMAT_UNSUPPORTED(`${m[1]} (segment)`, m[2], m[3]) : errors.STORE_FORMAT_UNSUPPORTED(where, '?', e.message)).because(e);
  }
  return err;
}

export class NativeEngine {
  /** @type {string} */ #dir;
  /** @type {string} */ #name;
  /** @type {number} */ #width;
  /** @type {EngineOptions} */ #opts;
  #addon = loadAddon();
  /** @type {import('./native.js').NativeView} */ #view;
  /** @type {number} */ #lockFd;
  /** @type {number} */ #mergeFd;
  /** @type {string} */ #createdAt = '';
  /** Set once the collection is found dropped (see present()). */
  #dropped = false;

  /** @type {string} */ #manifestName = '';
  /** @type {import('./files.js').Manifest} */ #manifest = { format: FORMAT, generation: 0, wal: 0, segments: [] };
  #walSeq = 0;
  #walFd = -1;
  #walWriteFd = -1;
  #walOffset = 0;
  #walOps = 0;
  #walFirstTime = 0;
  #lastRefresh = 0;
  /** Bumped whenever the view changes (a new manifest, WAL records applied): see version(). */
  #version = 0;
  /** True while this process appends to the WAL: its own refreshes must not read the half-acknowledged bytes. */
  #appending = false;

  /** @type {Pending[]} */ #pending = [];
  #writing = false;
  /** @type {Promise<void>} */ #lockChain = Promise.resolve();
  /** @type {Promise<void> | null} */ #merging = null;
  /** @type {NodeJS.Timeout | null} */ #timer = null;
  #closed = false;
  /** @type {string | null} */ #lastBackgroundError = null;

  /**
   * Opens the collection folder. With `create`, a missing collection is created (width required); without,
   * nothing is created on disk and a missing one is SCDV_COLLECTION_NOT_FOUND.
   * @param {string} dir collection folder
   * @param {string} name
   * @param {number | undefined} width
   * @param {EngineOptions} opts
   * @param {boolean} create
   */
  constructor(dir, name, width, opts, create) {
    this.#dir = dir;
    this.#name = name;
    this.#opts = opts;
    // A dropCollection() in another process may rename the folder away between our open and our lock:
    // then the lock we got is the dropped collection's, and the open starts over.
    for (let attempt = 0; ; attempt++) {
      const fds = this.#openLockFiles(create);
      this.#lockFd = fds.lock;
      this.#mergeFd = fds.merge;
      let stale = false;
      try {
        this.#addon.flock(this.#lockFd, 'ex');
        try {
          if (!sameFile(this.#lockFd, path.join(dir, 'LOCK'))) {
            if (!create || attempt >= 20) throw this.#notFound();
            stale = true;
            continue; // (the finally blocks unlock and close the stale files)
          }
          if (!fs.existsSync(path.join(dir, 'CURRENT'))) {
            if (!create) throw this.#notFound();
            if (width === undefined) throw errors.STORE_WIDTH_REQUIRED(name, path.dirname(dir));
            this.#create(width);
          }
          const info = readCollectionInfo(dir);
          if (width !== undefined && width !== info.width) throw errors.STORE_WIDTH_MISMATCH(name, String(info.width), String(width));
          this.#width = info.width;
          this.#createdAt = String(info.created_at);
          this.#view = new this.#addon.View(this.#width);
          this.#refresh(true);
          this.#truncateTornTail();
          if (this.#addon.flock(this.#mergeFd, 'exnb')) {
            try {
              this.#cleanup();
            } finally {
              this.#addon.flock(this.#mergeFd, 'un');
            }
          }
          break;
        } finally {
          this.#addon.flock(this.#lockFd, 'un');
        }
      } catch (err) {
        fs.closeSync(this.#lockFd);
        fs.closeSync(this.#mergeFd);
        if (this.#walFd >= 0) fs.closeSync(this.#walFd);
        throw err;
      } finally {
        if (stale) {
          fs.closeSync(this.#lockFd);
          fs.closeSync(this.#mergeFd);
        }
      }
    }
    if (opts.maintenanceMs > 0) {
      this.#timer = setInterval(() => this.#maintain(), opts.maintenanceMs);
      this.#timer.unref();
    }
  }

  /**
   * LOCK and MERGE.lock, opened (and with `create`, the folder and both files created when missing).
   * @param {boolean} create
   * @returns {{lock: number, merge: number}}
   */
  #openLockFiles(create) {
    const flags = fs.constants.O_RDWR | (create ? fs.constants.O_CREAT : 0);
    if (create) fs.mkdirSync(this.#dir, { recursive: true });
    let lock = -1;
    try {
      lock = fs.openSync(path.join(this.#dir, 'LOCK'), flags, 0o644);
      return { lock, merge: fs.openSync(path.join(this.#dir, 'MERGE.lock'), flags, 0o644) };
    } catch (err) {
      if (lock >= 0) fs.closeSync(lock);
      if (!create && isEnoent(err)) throw this.#notFound();
      throw err;
    }
  }

  #notFound() {
    return errors.COLLECTION_NOT_FOUND(this.#name, path.basename(path.dirname(this.#dir)));
  }

  /**
   * False once the collection was dropped (by any process): its folder's LOCK is no longer the file this
   * engine holds. Looked at on every call (one stat); a dropped engine stays dropped.
   */
  present() {
    if (this.#dropped) return false;
    if (this.#lockFd >= 0 && !sameFile(this.#lockFd, path.join(this.#dir, 'LOCK'))) this.#dropped = true;
    return !this.#dropped;
  }

  /** Throws SCDV_COLLECTION_NOT_FOUND when the collection was dropped. */
  #checkPresent() {
    if (!this.present()) {
      if (this.#timer) clearInterval(this.#timer);
      this.#timer = null;
      throw this.#notFound();
    }
  }

  /**
   * This process drops the collection: new calls fail with SCDV_COLLECTION_NOT_FOUND, queued writes complete,
   * files are released (the caller then removes the folder under LOCK).
   * @returns {Promise<void>}
   */
  closeDropped() {
    this.#dropped = true;
    return this.close();
  }

  get width() { return this.#width; }
  get name() { return this.#name; }
  get dir() { return this.#dir; }
  /** @returns {string} collection.json's created_at: tells a recreated collection from the one it replaced */
  get createdAt() { return this.#createdAt; }
  get searchDefaults() { return { budget: this.#opts.budget, candidates: this.#opts.candidates, minPostings: this.#opts.minPostings }; }

  /** @param {number} width */
  #create(width) {
    const dir = this.#dir;
    writeFileDurable(path.join(dir, 'collection.json'),
      JSON.stringify({ name: this.#name, width, format: FORMAT, created_at: new Date().toISOString() }, null, 1));
    writeFileDurable(path.join(dir, walName(1)), encodeHeader(1));
    publishManifest(dir, { format: FORMAT, generation: 1, wal: 1, segments: [] });
  }

  #checkOpen() {
    if (this.#dropped) throw this.#notFound();
    if (this.#closed) throw errors.STORE_CLOSED(this.#dir);
  }

  // ------------------------------------------------------------------------------------------ reading

  /**
   * Brings the view up to date with CURRENT and the WAL (at most every refreshMs unless forced).
   * @param {boolean} [force]
   */
  #refresh(force = false) {
    const now = Date.now();
    if (!force && now - this.#lastRefresh < this.#opts.refreshMs) return;
    this.#checkPresent();
    for (let attempt = 0; ; attempt++) {
      try {
        const name = readCurrent(this.#dir);
        if (name !== this.#manifestName) this.#loadManifest(name);
        this.#readWalTail();
        this.#lastRefresh = now;
        return;
      } catch (err) {
        // A concurrent flush or merge replaced a file between our reads: start again from CURRENT.
        if (isEnoent(err) && attempt < 50) {
          this.#checkPresent(); // ... unless the whole collection was dropped
          continue;
        }
        throw wrapNative(err, this.#dir);
      }
    }
  }

  /** @param {string} name */
  #loadManifest(name) {
    const m = readManifest(this.#dir, name);
    const walChanged = m.wal !== this.#walSeq;
    let walFd = -1;
    if (walChanged) {
      walFd = fs.openSync(path.join(this.#dir, walName(m.wal)), 'r');
      try {
        const head = Buffer.alloc(WAL_HEADER_BYTES);
        fs.readSync(walFd, head, 0, WAL_HEADER_BYTES, 0);
        if (decodeHeader(head) !== m.wal) throw errors.STORE_CORRUPT(path.join(this.#dir, walName(m.wal)), 'bad WAL header');
      } catch (err) {
        fs.closeSync(walFd);
        throw err;
      }
    }
    try {
      this.#view.update({
        segments: m.segments.map((s) => ({ path: path.join(this.#dir, s.name), delPath: s.del ? path.join(this.#dir, s.del) : null })),
        resetMem: walChanged,
      });
    } catch (err) {
      if (walFd >= 0) fs.closeSync(walFd);
      throw err;
    }
    if (walChanged) {
      if (this.#walFd >= 0) fs.closeSync(this.#walFd);
      if (this.#walWriteFd >= 0) fs.closeSync(this.#walWriteFd);
      this.#walWriteFd = -1;
      this.#walFd = walFd;
      this.#walSeq = m.wal;
      this.#walOffset = WAL_HEADER_BYTES;
      this.#walOps = 0;
      this.#walFirstTime = 0;
    }
    this.#manifest = m;
    this.#manifestName = name;
    this.#version++;
  }

  /** Decodes the WAL's new whole records into the view. Returns the size of the file. */
  #readWalTail() {
    const size = fs.fstatSync(this.#walFd).size;
    if (size <= this.#walOffset || this.#appending) return size;
    const buf = Buffer.allocUnsafe(size - this.#walOffset);
    let got = 0;
    while (got < buf.length) {
      const r = fs.readSync(this.#walFd, buf, got, buf.length - got, this.#walOffset + got);
      if (r === 0) break;
      got += r;
    }
    const { records, end, entries } = decodeRecords(buf.subarray(0, got));
    if (records.length) {
      this.#apply(collapse(records));
      this.#walOffset += end;
      this.#walOps += entries;
      if (!this.#walFirstTime) this.#walFirstTime = Math.min(...records.map((r) => r.time));
    }
    return size;
  }

  /** @param {Map<string, import('./validate.js').PreparedDoc | null>} ops */
  #apply(ops) {
    /** @type {import('./validate.js').PreparedDoc[]} */
    const ups = [];
    /** @type {string[]} */
    const dels = [];
    for (const [id, d] of ops) {
      if (d) ups.push(d); else dels.push(id);
    }
    this.#view.update({ ...(ups.length ? { upserts: pack(ups) } : {}), ...(dels.length ? { deletes: dels } : {}) });
    this.#version++;
  }

  /** Under LOCK: drop bytes after the last whole record (a writer died while appending). */
  #truncateTornTail() {
    const size = this.#readWalTail();
    if (size > this.#walOffset) {
      const fd = fs.openSync(path.join(this.#dir, walName(this.#walSeq)), 'r+');
      try {
        fs.ftruncateSync(fd, this.#walOffset);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    }
  }

  /**
   * @param {Uint32Array} indices
   * @param {Float32Array} values
   * @param {import('./native.js').NativeSearchOptions} opts
   */
  search(indices, values, opts) {
    this.#checkOpen();
    this.#refresh();
    try {
      return this.#view.search(indices, values, opts);
    } catch (err) {
      throw wrapNative(err, this.#dir);
    }
  }

  /**
   * @param {Uint32Array} indices
   * @param {Float32Array} values
   * @param {import('./native.js').NativeSearchOptions} opts
   */
  async searchAsync(indices, values, opts) {
    this.#checkOpen();
    this.#refresh();
    try {
      return await this.#view.searchAsync(indices, values, opts);
    } catch (err) {
      throw wrapNative(err, this.#dir);
    }
  }

  /** @param {string} id */
  get(id) {
    this.#checkOpen();
    this.#refresh();
    return this.#view.get(id);
  }

  count() {
    this.#checkOpen();
    this.#refresh();
    return this.#view.count();
  }

  /** @param {string} id */
  exists(id) {
    this.#checkOpen();
    this.#refresh();
    return this.#view.live([id])[0] === 1;
  }

  /**
   * A number that grows whenever this process's view of the collection changes: a write by any process (seen
   * within refreshMs), a flush or a merge. Equal numbers from one engine mean the same contents.
   */
  version() {
    this.#checkOpen();
    this.#refresh();
    return this.#version;
  }

  /**
   * The live ids of the current snapshot, read in pages of pageSize as the iterable is consumed; later writes
   * are not seen. The iterable can be iterated again (same snapshot).
   * @param {number} [pageSize]
   * @returns {Promise<Iterable<string>>}
   */
  async ids(pageSize = 4096) {
    this.#checkOpen();
    this.#refresh();
    const view = this.#view;
    const pinned = view.pin();
    return {
      *[Symbol.iterator]() {
        for (let pos = 0; pos >= 0;) {
          const page = view.ids(pinned, pos, pageSize);
          pos = page.next;
          yield* page.ids;
        }
      },
    };
  }

  /** @returns {EngineStats} */
  stats() {
    this.#checkOpen();
    this.#refresh();
    const v = this.#view.stats();
    let bytes = 0, nnz = 0, postings = 0, deleted = 0;
    for (const s of v.segments) {
      bytes += s.bytes;
      nnz += s.nnz;
      postings += s.postingsBytes;
      deleted += s.deleted;
    }
    return {
      name: this.#name,
      width: this.#width,
      segments: v.segments.length,
      docs: this.#view.count(),
      deleted,
      bytes,
      nnz,
      bytes_per_nnz: { postings: nnz ? postings / nnz : 0, total: nnz ? bytes / nnz : 0 },
      wal: { seq: this.#walSeq, docs: this.#walOps, bytes: this.#walOffset },
      generation: this.#manifest.generation,
      segmentDetails: v.segments,
      lastBackgroundError: this.#lastBackgroundError,
    };
  }

  // ------------------------------------------------------------------------------------------ writing

  /** @param {import('./validate.js').PreparedDoc[]} docs */
  upsert(docs) {
    return /** @type {Promise<void>} */ (this.#enqueue({ kind: 'upsert', docs }));
  }

  /** @param {string[]} ids */
  delete(ids) {
    return /** @type {Promise<number>} */ (this.#enqueue({ kind: 'delete', ids }));
  }

  /** Writes the WAL's operations into a segment now (no-op when the WAL is empty). */
  flush() {
    return /** @type {Promise<void>} */ (this.#enqueue({ kind: 'flush', force: true }));
  }

  /**
   * @param {WriteJob} job
   * @returns {Promise<unknown>}
   */
  #enqueue(job) {
    this.#checkOpen();
    return new Promise((resolve, reject) => {
      this.#pending.push({ job, resolve, reject });
      if (!this.#writing) void this.#writeLoop();
    });
  }

  /**
   * Runs fn holding LOCK: in-process first (flock does not exclude another use of the same descriptor),
   * then across processes (a busy lock is waited for on the thread pool, not on the event loop).
   * @template T
   * @param {() => Promise<T>} fn
   * @returns {Promise<T>}
   */
  async #withLock(fn) {
    const prev = this.#lockChain;
    /** @type {() => void} */
    let release = () => {};
    this.#lockChain = new Promise((r) => { release = r; });
    await prev;
    try {
      if (!this.#addon.flock(this.#lockFd, 'exnb')) await this.#addon.flockAsync(this.#lockFd, 'ex');
      try {
        // A drop renames the folder away holding LOCK: whoever gets the lock after it finds it gone.
        this.#checkPresent();
        return await fn();
      } finally {
        this.#addon.flock(this.#lockFd, 'un');
      }
    } finally {
      release();
    }
  }

  async #writeLoop() {
    this.#writing = true;
    try {
      while (this.#pending.length) {
        const group = this.#pending.splice(0);
        /** @type {unknown[]} */
        let results = [];
        let flushWanted = false;
        try {
          await this.#withLock(async () => {
            this.#refresh(true);
            this.#truncateTornTail();
            results = await this.#appendGroup(group);
            // The writes are durable now: acknowledge them before any flush work.
            group.forEach((g, i) => { if (g.job.kind !== 'flush') g.resolve(results[i]); });
            const forced = group.some((g) => g.job.kind === 'flush' && g.job.force);
            if (forced || this.#shouldFlush()) {
              try {
                await this.#flushLocked();
              } catch (err) {
                if (forced) throw err;
                this.#backgroundError(err);
              }
            }
            flushWanted = true;
          });
          for (const g of group) if (g.job.kind === 'flush') g.resolve(undefined);
        } catch (err) {
          for (const g of group) g.reject(err); // no-op for the ones already resolved
        }
        if (flushWanted) this.#maybeAutoMerge();
      }
    } finally {
      this.#writing = false;
      this.#maybeRelease();
    }
  }

  /**
   * Under LOCK, with the view refreshed: one WAL record per upsert/delete call, one write + fdatasync.
   * @param {Pending[]} group
   * @returns {Promise<unknown[]>} per job: undefined (upsert, flush) or the number deleted
   */
  async #appendGroup(group) {
    const now = Date.now();
    /** @type {Map<string, boolean>} */
    const overlay = new Map(); // id -> live, for earlier calls of this group
    /** @type {Buffer[]} */
    const bufs = [];
    /** @type {unknown[]} */
    const results = [];
    /** @type {import('./wal.js').WalRecord[]} */
    const records = [];
    let entries = 0;
    for (const { job } of group) {
      if (job.kind === 'upsert') {
        bufs.push(encodeUpsert(job.docs, now));
        records.push({ type: 'upsert', time: now, docs: job.docs });
        for (const d of job.docs) overlay.set(d.id, true);
        entries += job.docs.length;
        results.push(undefined);
      } else if (job.kind === 'delete') {
        const ids = [...new Set(job.ids)];
        const unknown = ids.filter((id) => !overlay.has(id));
        const live = this.#view.live(unknown);
        const liveSet = new Set(unknown.filter((_, i) => live[i]));
        let n = 0;
        for (const id of ids) {
          if (overlay.has(id) ? overlay.get(id) : liveSet.has(id)) n++;
          overlay.set(id, false);
        }
        bufs.push(encodeDelete(ids, now));
        records.push({ type: 'delete', time: now, ids });
        entries += ids.length;
        results.push(n);
      } else {
        results.push(undefined);
      }
    }
    if (!bufs.length) return results;
    const data = bufs.length === 1 ? bufs[0] : Buffer.concat(bufs);
    if (this.#walWriteFd < 0) this.#walWriteFd = fs.openSync(path.join(this.#dir, walName(this.#walSeq)), 'r+');
    const fd = this.#walWriteFd;
    const at = this.#walOffset;
    this.#appending = true;
    try {
      let off = 0;
      while (off < data.length) {
        const { bytesWritten } = await fsWrite(fd, data, off, data.length - off, at + off);
        off += bytesWritten;
      }
      await fsDatasync(fd);
    } catch (err) {
      try { fs.ftruncateSync(fd, at); } catch { /* the next writer truncates the torn tail */ }
      throw err;
    } finally {
      this.#appending = false;
    }
    this.#walOffset = at + data.length;
    this.#walOps += entries;
    if (!this.#walFirstTime) this.#walFirstTime = now;
    this.#apply(collapse(records));
    return results;
  }

  #shouldFlush() {
    if (!this.#opts.autoFlush || this.#walOps === 0) return false;
    return this.#walOps >= this.#opts.flushDocs || Date.now() - this.#walFirstTime >= this.#opts.flushAgeMs;
  }

  /** Under LOCK with a refreshed view: the WAL becomes a segment; a manifest with a new WAL is published. */
  async #flushLocked() {
    if (this.#walOps === 0) return;
    const dir = this.#dir;
    const oldWal = walName(this.#walSeq);
    const buf = Buffer.allocUnsafe(this.#walOffset - WAL_HEADER_BYTES);
    for (let got = 0; got < buf.length;) {
      const r = fs.readSync(this.#walFd, buf, got, buf.length - got, WAL_HEADER_BYTES + got);
      if (r === 0) throw errors.STORE_CORRUPT(path.join(dir, oldWal), 'shorter than already read');
      got += r;
    }
    const { records } = decodeRecords(buf);
    const ops = collapse(records);
    /** @type {import('./validate.js').PreparedDoc[]} */
    const ups = [];
    for (const d of ops.values()) if (d) ups.push(d);
    const m = this.#manifest;
    const gen = m.generation + 1;
    /** @type {import('./files.js').SegmentEntry[]} */
    const segments = [];
    /** @type {string[]} */
    const obsolete = [oldWal, this.#manifestName];
    /** @type {string[]} */
    const oldDels = [];
    // Older copies of every id written in this WAL are deleted in their segments.
    const located = this.#view.locate([...ops.keys()]);
    m.segments.forEach((s, i) => {
      const locals = located[i];
      if (!locals || locals.length === 0) { segments.push(s); return; }
      const del = `${s.name}.del-${gen}`;
      const deleted = writeDeletions(dir, del, s.docs, s.del, locals);
      if (s.del) oldDels.push(s.del);
      segments.push({ ...s, del, deleted });
    });
    if (ups.length) {
      const name = `seg-${String(this.#walSeq).padStart(10, '0')}.seg`;
      const tmp = path.join(dir, `${name}.tmp`);
      const opts = { tiers: this.#opts.tiers, minTierList: this.#opts.minTierList };
      let r;
      try {
        r = await this.#addon.buildSegmentAsync(tmp, this.#width, pack(ups), opts);
      } catch (err) {
        fs.rmSync(tmp, { force: true });
        throw err;
      }
      fs.renameSync(tmp, path.join(dir, name));
      segments.push({ name, docs: r.docs, nnz: r.nnz, bytes: r.bytes, postingsBytes: r.postingsBytes, del: null, deleted: 0 });
    }
    const newSeq = this.#walSeq + 1;
    writeFileDurable(path.join(dir, walName(newSeq)), encodeHeader(newSeq));
    const name = publishManifest(dir, { format: FORMAT, generation: gen, wal: newSeq, segments });
    this.#loadManifest(name);
    for (const f of obsolete) fs.rmSync(path.join(dir, f), { force: true });
    // A merge running now may still need the replaced deletion files (to carry deletions over): those are
    // left to the merge's clean-up.
    if (oldDels.length && !this.#merging && this.#addon.flock(this.#mergeFd, 'exnb')) {
      try {
        for (const f of oldDels) fs.rmSync(path.join(dir, f), { force: true });
      } finally {
        this.#addon.flock(this.#mergeFd, 'un');
      }
    }
  }

  // ------------------------------------------------------------------------------------------ merging

  /**
   * Merges segments. force: every segment into one (dropping deleted documents), waiting for a merge
   * running elsewhere; otherwise the background policy (the mergeFactor smallest when there are more than
   * maxSegments), skipped when another merge runs.
   * @param {{force?: boolean}} [opts]
   */
  async merge({ force = true } = {}) {
    this.#checkOpen();
    while (this.#merging) {
      await this.#merging.catch(() => {});
      if (!force) return;
    }
    const p = this.#mergeRun(force);
    this.#merging = p.finally(() => {
      this.#merging = null;
      this.#maybeRelease();
    });
    return this.#merging;
  }

  #maybeAutoMerge() {
    if (!this.#opts.autoMerge || this.#closed || this.#merging) return;
    if (this.#manifest.segments.length <= this.#opts.maxSegments) return;
    this.merge({ force: false }).catch((err) => this.#backgroundError(err));
  }

  /** @param {boolean} force */
  async #mergeRun(force) {
    if (!this.#addon.flock(this.#mergeFd, 'exnb')) {
      if (!force) return;
      await this.#addon.flockAsync(this.#mergeFd, 'ex');
    }
    try {
      for (;;) {
        if (this.#closed) return;
        this.#refresh(true);
        const segs = this.#manifest.segments;
        /** @type {import('./files.js').SegmentEntry[]} */
        let inputs;
        if (force) {
          if (segs.length === 0 || (segs.length === 1 && segs[0].deleted === 0)) return;
          inputs = segs;
        } else {
          if (segs.length <= this.#opts.maxSegments) return;
          inputs = [...segs].sort((a, b) => (a.docs - a.deleted) - (b.docs - b.deleted)).slice(0, Math.max(2, this.#opts.mergeFactor));
        }
        await this.#mergeOnce(inputs);
        if (force) return;
      }
    } finally {
      if (this.#mergeFd >= 0) this.#addon.flock(this.#mergeFd, 'un');
    }
  }

  /**
   * Holding MERGE.lock: builds the merged segment, then publishes it under LOCK, carrying over the
   * deletions made while it was being built.
   * @param {import('./files.js').SegmentEntry[]} inputs
   */
  async #mergeOnce(inputs) {
    const dir = this.#dir;
    const outName = `seg-m${Date.now().toString(36)}-${randomBytes(4).toString('hex')}.seg`;
    const tmp = path.join(dir, `${outName}.tmp`);
    const opts = { tiers: this.#opts.tiers, minTierList: this.#opts.minTierList };
    /** @type {import('./native.js').BuildResult | null} */
    let r;
    try {
      r = await this.#addon.mergeSegmentsAsync(tmp,
        inputs.map((s) => ({ path: path.join(dir, s.name), delPath: s.del ? path.join(dir, s.del) : null })), opts);
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      throw wrapNative(err, dir);
    }
    try {
      await this.#withLock(async () => {
        if (this.#closed) throw new Error('closed');
        this.#refresh(true);
        const cur = this.#manifest;
        const names = new Set(inputs.map((s) => s.name));
        const present = cur.segments.filter((s) => names.has(s.name));
        if (present.length !== inputs.length) throw new Error('merge inputs vanished (another merge ran without MERGE.lock?)');
        const gen = cur.generation + 1;
        /** @type {string[]} */
        const obsolete = [this.#manifestName];
        for (const s of inputs) {
          obsolete.push(s.name);
          const now = cur.segments.find((x) => x.name === s.name);
          if (now?.del) obsolete.push(now.del);
          if (s.del && s.del !== now?.del) obsolete.push(s.del);
        }
        /** @type {import('./files.js').SegmentEntry | null} */
        let out = null;
        if (r) {
          // Deletions published since the merge started: map them to the new segment by id.
          /** @type {string[]} */
          const lateIds = [];
          for (const s of inputs) {
            const now = /** @type {import('./files.js').SegmentEntry} */ (cur.segments.find((x) => x.name === s.name));
            if (now.del === s.del) continue;
            const before = s.del ? readDeletions(path.join(dir, s.del), s.docs) : null;
            const after = readDeletions(path.join(dir, /** @type {string} */ (now.del)), s.docs);
            const locals = newlyDeleted(before, after);
            if (locals.length) lateIds.push(...this.#addon.segmentIds(path.join(dir, s.name), locals));
          }
          fs.renameSync(tmp, path.join(dir, outName));
          out = { name: outName, docs: r.docs, nnz: r.nnz, bytes: r.bytes, postingsBytes: r.postingsBytes, del: null, deleted: 0 };
          if (lateIds.length) {
            const pos = this.#addon.segmentLookup(path.join(dir, outName), lateIds);
            const locals = Uint32Array.from([...pos].filter((x) => x >= 0));
            if (locals.length) {
              out.del = `${outName}.del-${gen}`;
              out.deleted = writeDeletions(dir, out.del, r.docs, null, locals);
            }
          }
        }
        /** @type {import('./files.js').SegmentEntry[]} */
        const segments = [];
        let placed = false;
        for (const s of cur.segments) {
          if (!names.has(s.name)) { segments.push(s); continue; }
          if (!placed && out) segments.push(out);
          placed = true;
        }
        if (!out) fsyncDir(dir);
        const name = publishManifest(dir, { format: FORMAT, generation: gen, wal: cur.wal, segments });
        this.#loadManifest(name);
        for (const f of obsolete) fs.rmSync(path.join(dir, f), { force: true });
        this.#cleanup(); // holding LOCK and MERGE.lock: nothing else can be writing files
      });
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      if (this.#closed) return;
      throw err;
    }
  }

  // ---------------------------------------------------------------------------------------- background

  #maintain() {
    if (this.#closed || this.#dropped) return;
    try {
      this.#refresh();
      if (!this.#writing && this.#shouldFlush()) {
        this.#enqueue({ kind: 'flush', force: false }).catch((err) => this.#backgroundError(err));
      }
    } catch (err) {
      this.#backgroundError(err);
    }
  }

  /** @param {unknown} err */
  #backgroundError(err) {
    if (!this.present()) return; // the collection was dropped: nothing left to report about it
    const e = err instanceof Error ? err : new Error(String(err));
    this.#lastBackgroundError = `${new Date().toISOString()} ${e.message}`;
    if (this.#opts.onBackgroundError) this.#opts.onBackgroundError(e);
    else process.emitWarning(`scdv store ${this.#dir}: background ${e.message}`, 'ScdvStoreWarning');
  }

  /**
   * Removes what the live manifest does not reference: temp files, old WALs and manifests, orphaned segments
   * and deletion files (left by a crash, or by a flush that ran during a merge). Only while holding LOCK and
   * MERGE.lock: then no other process is writing any of them.
   */
  #cleanup() {
    const m = this.#manifest;
    const keep = new Set([this.#manifestName, walName(m.wal)]);
    for (const s of m.segments) {
      keep.add(s.name);
      if (s.del) keep.add(s.del);
    }
    for (const f of fs.readdirSync(this.#dir)) {
      if (keep.has(f)) continue;
      if (/^(seg-|wal-|MANIFEST-)/.test(f) || /\.tmp/.test(f)) fs.rmSync(path.join(this.#dir, f), { force: true });
    }
  }

  /**
   * Stops background work and releases files. Writes already queued still complete; a running merge is
   * abandoned (its temporary file is removed). The promise resolves once everything is released.
   * @returns {Promise<void>}
   */
  close() {
    if (!this.#closed) {
      this.#closed = true;
      if (this.#timer) clearInterval(this.#timer);
      this.#timer = null;
      this.#maybeRelease();
    }
    return this.#released;
  }

  /** @type {() => void} */
  #onReleased = () => {};
  /** @type {Promise<void>} */
  #released = new Promise((resolve) => { this.#onReleased = resolve; });

  #maybeRelease() {
    if (this.#closed && !this.#writing && !this.#merging && this.#lockFd >= 0) {
      this.#release();
      this.#onReleased();
    }
  }

  #release() {
    for (const fd of [this.#walFd, this.#walWriteFd, this.#lockFd, this.#mergeFd]) {
      if (fd >= 0) {
        try { fs.closeSync(fd); } catch { /* already closed */ }
      }
    }
    this.#walFd = this.#walWriteFd = this.#lockFd = this.#mergeFd = -1;
    this.#view.close();
  }
}

export { manifestName };
