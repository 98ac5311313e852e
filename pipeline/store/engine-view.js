// Keeping an engine's native View up to date with the folder, and repairing the WAL: re-reading CURRENT and
// loading a new manifest (segments, deletion bitmaps, a new live WAL), decoding the WAL's new whole records into
// the View's in-memory tail, and truncating a torn tail left by a writer that died while appending.
// Functions of the engine's shared state (engine-state.js).
import fs from 'node:fs';
import path from 'node:path';
import { errors } from '../errors.js';
import { readCurrent, readManifest, walName } from './files.js';
import { WAL_HEADER_BYTES, collapse, decodeHeader, decodeRecords, pack } from './wal.js';
import { isEnoent, wrapNative } from './engine-state.js';

/** @typedef {import('./engine-state.js').EngineState} EngineState */

/**
 * Brings the view up to date with CURRENT and the WAL (at most every refreshMs unless forced).
 * @param {EngineState} state
 * @param {boolean} [force]
 */
export function refresh(state, force = false) {
  const now = Date.now();
  if (!force && now - state.lastRefresh < state.opts.refreshMs) return;
  state.checkPresent();
  for (let attempt = 0; ; attempt++) {
    try {
      const name = readCurrent(state.dir);
      if (name !== state.manifestName) loadManifest(state, name);
      readWalTail(state);
      state.lastRefresh = now;
      return;
    } catch (err) {
      // A concurrent flush or merge replaced a file between our reads: start again from CURRENT.
      if (isEnoent(err) && attempt < 50) {
        state.checkPresent(); // ... unless the whole collection was dropped
        continue;
      }
      throw wrapNative(err, state.dir);
    }
  }
}

/**
 * Installs manifest `name` in the view; when it names a new WAL, that WAL becomes the live one (read from its start).
 * @param {EngineState} state
 * @param {string} name
 */
export function loadManifest(state, name) {
  const m = readManifest(state.dir, name);
  const walChanged = m.wal !== state.walSeq;
  let walFd = -1;
  if (walChanged) {
    walFd = fs.openSync(path.join(state.dir, walName(m.wal)), 'r');
    try {
      const head = Buffer.alloc(WAL_HEADER_BYTES);
      fs.readSync(walFd, head, 0, WAL_HEADER_BYTES, 0);
      if (decodeHeader(head) !== m.wal) throw errors.STORE_CORRUPT(path.join(state.dir, walName(m.wal)), 'bad WAL header');
    } catch (err) {
      fs.closeSync(walFd);
      throw err;
    }
  }
  try {
    state.view.update({
      segments: m.segments.map((seg) => ({ path: path.join(state.dir, seg.name), delPath: seg.del ? path.join(state.dir, seg.del) : null })),
      resetMem: walChanged,
    });
  } catch (err) {
    if (walFd >= 0) fs.closeSync(walFd);
    throw err;
  }
  if (walChanged) {
    if (state.walFd >= 0) fs.closeSync(state.walFd);
    if (state.walWriteFd >= 0) fs.closeSync(state.walWriteFd);
    state.walWriteFd = -1;
    state.walFd = walFd;
    state.walSeq = m.wal;
    state.walOffset = WAL_HEADER_BYTES;
    state.walOps = 0;
    state.walFirstTime = 0;
  }
  state.manifest = m;
  state.manifestName = name;
  state.version++;
}

/**
 * Decodes the WAL's new whole records into the view. Returns the size of the file.
 * @param {EngineState} s
 */
function readWalTail(s) {
  const size = fs.fstatSync(s.walFd).size;
  if (size <= s.walOffset || s.appending) return size;
  const buf = Buffer.allocUnsafe(size - s.walOffset);
  let got = 0;
  while (got < buf.length) {
    const r = fs.readSync(s.walFd, buf, got, buf.length - got, s.walOffset + got);
    if (r === 0) break;
    got += r;
  }
  const { records, end, entries } = decodeRecords(buf.subarray(0, got));
  if (records.length) {
    apply(s, collapse(records));
    s.walOffset += end;
    s.walOps += entries;
    if (!s.walFirstTime) s.walFirstTime = Math.min(...records.map((r) => r.time));
  }
  return size;
}

/**
 * Applies the net operations of WAL records to the view's in-memory tail.
 * @param {EngineState} state
 * @param {Map<string, import('./validate.js').PreparedDoc | null>} ops
 */
export function apply(state, ops) {
  /** @type {import('./validate.js').PreparedDoc[]} */
  const ups = [];
  /** @type {string[]} */
  const dels = [];
  for (const [id, d] of ops) {
    if (d) ups.push(d); else dels.push(id);
  }
  state.view.update({ ...(ups.length ? { upserts: pack(ups) } : {}), ...(dels.length ? { deletes: dels } : {}) });
  state.version++;
}

/**
 * Under LOCK: drop bytes after the last whole record (a writer died while appending).
 * @param {EngineState} state
 */
export function truncateTornTail(state) {
  const size = readWalTail(state);
  if (size > state.walOffset) {
    const fd = fs.openSync(path.join(state.dir, walName(state.walSeq)), 'r+');
    try {
      fs.ftruncateSync(fd, state.walOffset);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }
}
