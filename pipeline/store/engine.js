// NativeEngine: one process's handle on one collection folder, the one class the rest of the store uses. It owns
// the files (WAL, manifests, deletion bitmaps, segments), the cross-process locks and the background work (flush,
// merge); the native View (pipeline/store/native) holds the mapped segments and the WAL tail and does the searching.
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
//
// This file holds the engine's opening of the folder (locks, creation, the race with a drop), its reads and its
// lifecycle; the rest is in functions of its shared state (engine-state.js): engine-view.js (manifests, WAL tail,
// torn-tail repair), engine-writes.js (write queue, group commit), engine-maintenance.js (flush, merge, clean-up).
import fs from 'node:fs';
import path from 'node:path';
import { errors } from '../errors.js';
import { FORMAT, publishManifest, readCollectionInfo, sameFile, walName, writeFileDurable } from './files.js';
import { encodeHeader } from './wal.js';
import { EngineState, isEnoent, wrapNative } from './engine-state.js';
import { refresh, truncateTornTail } from './engine-view.js';
import { enqueue } from './engine-writes.js';
import { cleanup, merge, shouldFlush } from './engine-maintenance.js';
import { searchesInFlight } from './search-threads.js';
import { lockSync } from './process-locks.js';

export { DEFAULT_ENGINE_OPTIONS } from './engine-state.js';
/** @typedef {import('./engine-state.js').EngineOptions} EngineOptions */

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

export class NativeEngine {
  /** @type {EngineState} */ #s;

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
    const s = new EngineState(dir, name, opts);
    this.#s = s;
    // A dropCollection() in another process may rename the folder away between our open and our lock:
    // then the lock we got is the dropped collection's, and the open starts over.
    for (let attempt = 0; ; attempt++) {
      const fds = this.#openLockFiles(create);
      s.lockFd = fds.lock;
      s.mergeFd = fds.merge;
      let stale = false;
      try {
        // Never waits for this process's own hold on LOCK (a write group or a flush of another handle, a drop):
        // that holder needs this event loop to let go. An open that may create waits for it asynchronously (the
        // caller: process-locks.js whenFree). An open to read needs no lock: it reads the folder as every reader
        // does between writers (refresh), and leaves the torn-tail repair and the clean-up, which need LOCK, to
        // the next holder. (Nothing of this process runs between the holder's awaits while this code runs.)
        const release = lockSync(s.addon, s.lockFd);
        if (!release && create) throw errors.STORE_BUSY(name, path.basename(path.dirname(dir)));
        try {
          if (!sameFile(s.lockFd, path.join(dir, 'LOCK'))) {
            if (!create || attempt >= 20) throw s.notFound();
            stale = true;
            continue; // (the finally blocks unlock and close the stale files)
          }
          if (!fs.existsSync(path.join(dir, 'CURRENT'))) {
            if (!create) throw s.notFound();
            if (width === undefined) throw errors.STORE_WIDTH_REQUIRED(name, path.dirname(dir));
            this.#create(width);
          }
          const info = readCollectionInfo(dir);
          if (width !== undefined && width !== info.width) throw errors.STORE_WIDTH_MISMATCH(name, String(info.width), String(width));
          s.width = info.width;
          s.createdAt = String(info.created_at);
          s.view = new s.addon.View(s.width);
          refresh(s, true);
          if (release) {
            truncateTornTail(s);
            if (s.addon.flock(s.mergeFd, 'exnb')) {
              try {
                cleanup(s);
              } finally {
                s.addon.flock(s.mergeFd, 'un');
              }
            }
          }
          break;
        } finally {
          release?.();
        }
      } catch (err) {
        fs.closeSync(s.lockFd);
        fs.closeSync(s.mergeFd);
        if (s.walFd >= 0) fs.closeSync(s.walFd);
        throw err;
      } finally {
        if (stale) {
          fs.closeSync(s.lockFd);
          fs.closeSync(s.mergeFd);
        }
      }
    }
    if (opts.maintenanceMs > 0) {
      s.timer = setInterval(() => this.#maintain(), opts.maintenanceMs);
      s.timer.unref();
    }
  }

  /**
   * LOCK and MERGE.lock, opened (and with `create`, the folder and both files created when missing).
   * @param {boolean} create
   * @returns {{lock: number, merge: number}}
   */
  #openLockFiles(create) {
    const dir = this.#s.dir;
    const flags = fs.constants.O_RDWR | (create ? fs.constants.O_CREAT : 0);
    if (create) fs.mkdirSync(dir, { recursive: true });
    let lock = -1;
    try {
      lock = fs.openSync(path.join(dir, 'LOCK'), flags, 0o644);
      return { lock, merge: fs.openSync(path.join(dir, 'MERGE.lock'), flags, 0o644) };
    } catch (err) {
      if (lock >= 0) fs.closeSync(lock);
      if (!create && isEnoent(err)) throw this.#s.notFound();
      throw err;
    }
  }

  /** @param {number} width */
  #create(width) {
    const dir = this.#s.dir;
    writeFileDurable(path.join(dir, 'collection.json'),
      JSON.stringify({ name: this.#s.name, width, format: FORMAT, created_at: new Date().toISOString() }, null, 1));
    writeFileDurable(path.join(dir, walName(1)), encodeHeader(1));
    publishManifest(dir, { format: FORMAT, generation: 1, wal: 1, segments: [] });
  }

  /**
   * False once the collection was dropped (by any process): its folder's LOCK is no longer the file this
   * engine holds. Looked at on disk at most every refreshMs (a drop elsewhere is seen within it, as writes
   * are); a dropped engine stays dropped. Writes check exactly, under the lock.
   */
  present() {
    return this.#s.presentRecently();
  }

  /**
   * This process drops the collection: new calls fail with SCDV_COLLECTION_NOT_FOUND, queued writes complete,
   * files are released (the caller then removes the folder under LOCK).
   * @returns {Promise<void>}
   */
  closeDropped() {
    this.#s.dropped = true;
    this.#s.droppedHere = true;
    return this.close();
  }

  /** @returns {boolean} this process dropped the collection (closeDropped) */
  get droppedHere() { return this.#s.droppedHere; }
  get width() { return this.#s.width; }
  get name() { return this.#s.name; }
  get dir() { return this.#s.dir; }
  /** @returns {string} collection.json's created_at: tells a recreated collection from the one it replaced */
  get createdAt() { return this.#s.createdAt; }
  get searchDefaults() {
    const o = this.#s.opts;
    return { budget: o.budget, candidates: o.candidates, minPostings: o.minPostings };
  }

  // ------------------------------------------------------------------------------------------ reading

  /** Every read: open, not dropped, the view refreshed (at most every refreshMs). */
  #readable() {
    const s = this.#s;
    s.checkOpen();
    refresh(s);
    return s;
  }

  /**
   * @param {Uint32Array} indices
   * @param {Float32Array} values
   * @param {import('./native.js').NativeSearchOptions} opts
   */
  search(indices, values, opts) {
    const s = this.#readable();
    try {
      return s.view.search(indices, values, opts);
    } catch (err) {
      throw wrapNative(err, s.dir);
    }
  }

  /**
   * @param {Uint32Array} indices
   * @param {Float32Array} values
   * @param {import('./native.js').NativeSearchOptions} opts
   */
  searchAsync(indices, values, opts) {
    return this.#searchAsync((view) => view.searchAsync(indices, values, opts));
  }

  /**
   * searchAsync without the metadata (ids and scores).
   * @param {Uint32Array} indices
   * @param {Float32Array} values
   * @param {import('./native.js').NativeSearchOptions} opts
   */
  searchIdsAsync(indices, values, opts) {
    return this.#searchAsync((view) => view.searchIdsAsync(indices, values, opts));
  }

  /**
   * The re-ranked related list (pool search, feedback, collapse, doubling) on the pool: see Collection.searchRerankedAsync.
   * @param {Uint32Array} indices
   * @param {Float32Array} values
   * @param {import('./native.js').NativeSearchOptions} opts
   * @param {import('./native.js').NativeRerankSpec} spec
   */
  searchRerankedAsync(indices, values, opts, spec) {
    return this.#searchAsync((view) => view.searchRerankedAsync(indices, values, opts, spec));
  }

  /**
   * searchRerankedAsync with a live document's stored vector as the query (null: no live document has the id).
   * @param {string} id
   * @param {import('./native.js').NativeSearchOptions} opts
   * @param {import('./native.js').NativeRerankSpec} spec
   */
  searchRerankedByIdAsync(id, opts, spec) {
    return this.#searchAsync((view) => view.searchRerankedByIdAsync(id, opts, spec));
  }

  /**
   * One search on the store's search threads (search-threads.js), from the view readable now.
   * @template T
   * @param {(view: any) => Promise<T>} search
   * @returns {Promise<T>}
   */
  async #searchAsync(search) {
    const s = this.#readable();
    Atomics.add(searchesInFlight, 0, 1);
    try {
      return await search(s.view);
    } catch (err) {
      throw wrapNative(err, s.dir);
    } finally {
      Atomics.sub(searchesInFlight, 0, 1);
    }
  }

  /**
   * Metadata (stored JSON text, null: no live document) of many ids from one snapshot: see Collection.metas.
   * @param {string[]} ids
   */
  metas(ids) {
    return this.#readable().view.metas(ids);
  }

  /** @param {string} id */
  get(id) {
    return this.#readable().view.get(id);
  }

  /**
   * @param {string[]} ids
   * @param {Uint32Array} indices
   * @param {Float32Array} values
   */
  scores(ids, indices, values) {
    return this.#readable().view.scores(ids, indices, values);
  }

  /**
   * Stored vectors of many ids from one snapshot, in one native call (no meta): see Collection.vectors.
   * @param {string[]} ids
   * @returns {{found: Uint8Array, offsets: Uint32Array, indices: Uint32Array, values: Float32Array}}
   */
  vectors(ids) {
    return this.#readable().view.vectors(ids);
  }

  count() {
    return this.#readable().view.count();
  }

  /** @param {string} id */
  exists(id) {
    return this.#readable().view.live([id])[0] === 1;
  }

  /**
   * A number that grows whenever this process's view of the collection changes: a write by any process (seen
   * within refreshMs), a flush or a merge. Equal numbers from one engine mean the same contents.
   */
  version() {
    return this.#readable().version;
  }

  /**
   * The live ids of the current snapshot, read in pages of pageSize as the iterable is consumed; later writes
   * are not seen. The iterable can be iterated again (same snapshot).
   * @param {number} [pageSize]
   * @returns {Promise<Iterable<string>>}
   */
  async ids(pageSize = 4096) {
    const view = this.#readable().view;
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
    const s = this.#readable();
    const v = s.view.stats();
    let bytes = 0, nnz = 0, postings = 0, deleted = 0;
    for (const seg of v.segments) {
      bytes += seg.bytes;
      nnz += seg.nnz;
      postings += seg.postingsBytes;
      deleted += seg.deleted;
    }
    return {
      name: s.name,
      width: s.width,
      segments: v.segments.length,
      docs: s.view.count(),
      deleted,
      bytes,
      nnz,
      bytes_per_nnz: { postings: nnz ? postings / nnz : 0, total: nnz ? bytes / nnz : 0 },
      wal: { seq: s.walSeq, docs: s.walOps, bytes: s.walOffset },
      generation: s.manifest.generation,
      segmentDetails: v.segments,
      lastBackgroundError: s.lastBackgroundError,
    };
  }

  // ------------------------------------------------------------------------------------------ writing

  /** @param {import('./validate.js').PreparedDoc[]} docs */
  upsert(docs) {
    return /** @type {Promise<void>} */ (enqueue(this.#s, { kind: 'upsert', docs }));
  }

  /** @param {string[]} ids */
  delete(ids) {
    return /** @type {Promise<number>} */ (enqueue(this.#s, { kind: 'delete', ids }));
  }

  /** Writes the WAL's operations into a segment now (no-op when the WAL is empty). */
  flush() {
    return /** @type {Promise<void>} */ (enqueue(this.#s, { kind: 'flush', force: true }));
  }

  /**
   * Merges segments. force: every segment into one (dropping deleted documents), waiting for a merge
   * running elsewhere; otherwise the background policy (the mergeFactor smallest when there are more than
   * maxSegments), skipped when another merge runs.
   * @param {{force?: boolean}} [opts]
   */
  merge({ force = true } = {}) {
    return merge(this.#s, force);
  }

  // ---------------------------------------------------------------------------------------- background

  #maintain() {
    const s = this.#s;
    if (s.closed || s.dropped) return;
    try {
      refresh(s);
      if (!s.writing && shouldFlush(s)) {
        enqueue(s, { kind: 'flush', force: false }).catch((err) => s.backgroundError(err));
      }
    } catch (err) {
      s.backgroundError(err);
    }
  }

  /**
   * Stops background work and releases files. Writes already queued still complete; a running merge is
   * abandoned (its temporary file is removed). The promise resolves once everything is released.
   * @returns {Promise<void>}
   */
  close() {
    const s = this.#s;
    if (!s.closed) {
      s.closed = true;
      s.stopTimer();
      s.maybeRelease();
    }
    return s.released;
  }
}
