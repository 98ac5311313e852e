// An engine's maintenance of the folder: flush (the live WAL becomes a segment, older copies of its ids are
// marked deleted, a manifest with a new WAL is published), merge (MERGE.lock for the long build, LOCK only to
// publish, carrying over the deletions made meanwhile), the flush and merge policies, and the clean-up of files
// no manifest references. Functions of the engine's shared state (engine-state.js).
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { errors } from '../errors.js';
import { FORMAT, fsyncDirAsync, newlyDeleted, publishManifestAsync, readDeletions, walName, writeDeletions, writeFileDurableAsync } from './files.js';
import { WAL_HEADER_BYTES, collapse, decodeRecords, encodeHeader, pack } from './wal.js';
import { wrapNative } from './engine-state.js';
import { loadManifest, refresh } from './engine-view.js';

const fsRead = promisify(fs.read);

/** @typedef {import('./engine-state.js').EngineState} EngineState */

/**
 * The flush policy: the WAL holds flushDocs operations, or its oldest is flushAgeMs old.
 * @param {EngineState} state
 */
export function shouldFlush(state) {
  if (!state.opts.autoFlush || state.walOps === 0) return false;
  return state.walOps >= state.opts.flushDocs || Date.now() - state.walFirstTime >= state.opts.flushAgeMs;
}

/**
 * Builds the segment `name` of the WAL's upserts (through a temporary file, renamed when complete).
 * @param {EngineState} s
 * @param {string} name
 * @param {import('./validate.js').PreparedDoc[]} ups
 */
async function buildSegment(s, name, ups) {
  const tmp = path.join(s.dir, `${name}.tmp`);
  const opts = { tiers: s.opts.tiers, minTierList: s.opts.minTierList };
  let r;
  try {
    r = await s.addon.buildSegmentAsync(tmp, s.width, pack(ups), opts);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.renameSync(tmp, path.join(s.dir, name));
  return r;
}

/**
 * Under LOCK with a refreshed view: the WAL becomes a segment; a manifest with a new WAL is published.
 * @param {EngineState} state
 */
export async function flushLocked(state) {
  if (state.walOps === 0) return;
  const dir = state.dir;
  const oldWal = walName(state.walSeq);
  const buf = Buffer.allocUnsafe(state.walOffset - WAL_HEADER_BYTES);
  for (let got = 0; got < buf.length;) {
    const { bytesRead: r } = await fsRead(state.walFd, buf, got, buf.length - got, WAL_HEADER_BYTES + got);
    if (r === 0) throw errors.STORE_CORRUPT(path.join(dir, oldWal), 'shorter than already read');
    got += r;
  }
  const { records } = decodeRecords(buf);
  const ops = collapse(records);
  /** @type {import('./validate.js').PreparedDoc[]} */
  const ups = [];
  for (const d of ops.values()) if (d) ups.push(d);
  const m = state.manifest;
  const gen = m.generation + 1;
  /** @type {import('./files.js').SegmentEntry[]} */
  const segments = [];
  /** @type {string[]} */
  const obsolete = [oldWal, state.manifestName];
  /** @type {string[]} */
  const oldDels = [];
  // Older copies of every id written in this WAL are deleted in their segments. Every write and fsync of a flush runs on the libuv pool, so a serving process's event loop is not held by
  // the disk; independent files are written side by side (each pool round trip waits behind searches there).
  const located = state.view.locate([...ops.keys()]);
  const writes = m.segments.map(async (seg, i) => {
    const locals = located[i];
    if (!locals || locals.length === 0) return seg;
    const del = `${seg.name}.del-${gen}`;
    const deleted = await writeDeletions(dir, del, seg.docs, seg.del, locals);
    if (seg.del) oldDels.push(seg.del);
    return { ...seg, del, deleted };
  });
  const newSeq = state.walSeq + 1;
  const newWal = writeFileDurableAsync(path.join(dir, walName(newSeq)), encodeHeader(newSeq));
  // The new segment is built beside the deletion files and the new WAL (independent files): a flush holds the
  // writes of this process back, so its steps on the thread pool overlap rather than follow one another.
  const name = `seg-${String(state.walSeq).padStart(10, '0')}.seg`;
  const built = ups.length ? buildSegment(state, name, ups) : Promise.resolve(null);
  // Awaited below; a failure before then must not become an unhandled rejection.
  newWal.catch(() => {});
  built.catch(() => {});
  try {
    segments.push(...await Promise.all(writes));
    const r = await built;
    if (r) segments.push({ name, docs: r.docs, nnz: r.nnz, bytes: r.bytes, postingsBytes: r.postingsBytes, del: null, deleted: 0 });
    await newWal;
  } catch (err) {
    // Nothing names the new files yet; the new segment is removed once its build has settled.
    await built.then(() => removeFiles(dir, [name]), () => {});
    throw err;
  }
  await publishManifestAsync(dir, { format: FORMAT, generation: gen, wal: newSeq, segments }, (name) => loadManifest(state, name));
  await removeFiles(dir, obsolete);
  // A merge running now may still need the replaced deletion files (to carry deletions over): those are
  // left to the merge's clean-up.
  if (oldDels.length && !state.merging && state.addon.flock(state.mergeFd, 'exnb')) {
    try {
      // Synchronous: an await here would let a merge of this process take MERGE.lock (the same open file) and
      // lose it to the unlock below. Deletion files are small.
      for (const f of oldDels) fs.rmSync(path.join(dir, f), { force: true });
    } finally {
      state.addon.flock(state.mergeFd, 'un');
    }
  }
}

/**
 * Merges segments. force: every segment into one (dropping deleted documents), waiting for a merge
 * running elsewhere; otherwise the background policy (the mergeFactor smallest when there are more than
 * maxSegments), skipped when another merge runs.
 * @param {EngineState} state
 * @param {boolean} force
 * @returns {Promise<void>}
 */
export async function merge(state, force) {
  state.checkOpen();
  while (state.merging) {
    await state.merging.catch(() => {});
    if (!force) return;
  }
  const p = mergeRun(state, force);
  state.merging = p.finally(() => {
    state.merging = null;
    state.maybeRelease();
  });
  return state.merging;
}

/**
 * The background merge policy: a merge starts when there are more than maxSegments segments.
 * @param {EngineState} state
 */
export function maybeAutoMerge(state) {
  if (!state.opts.autoMerge || state.closed || state.merging) return;
  if (state.manifest.segments.length <= state.opts.maxSegments) return;
  merge(state, false).catch((err) => state.backgroundError(err));
}

/**
 * @param {EngineState} s
 * @param {boolean} force
 */
async function mergeRun(s, force) {
  if (!s.addon.flock(s.mergeFd, 'exnb')) {
    if (!force) return;
    await s.addon.flockAsync(s.mergeFd, 'ex');
  }
  try {
    for (;;) {
      if (s.closed) return;
      refresh(s, true);
      const segs = s.manifest.segments;
      /** @type {import('./files.js').SegmentEntry[]} */
      let inputs;
      if (force) {
        if (segs.length === 0 || (segs.length === 1 && segs[0].deleted === 0)) return;
        inputs = segs;
      } else {
        if (segs.length <= s.opts.maxSegments) return;
        inputs = [...segs].sort((a, b) => (a.docs - a.deleted) - (b.docs - b.deleted)).slice(0, Math.max(2, s.opts.mergeFactor));
      }
      await mergeOnce(s, inputs);
      if (force) return;
    }
  } finally {
    if (s.mergeFd >= 0) s.addon.flock(s.mergeFd, 'un');
  }
}

/**
 * Holding MERGE.lock: builds the merged segment, then publishes it under LOCK, carrying over the
 * deletions made while it was being built.
 * @param {EngineState} s
 * @param {import('./files.js').SegmentEntry[]} inputs
 */
async function mergeOnce(s, inputs) {
  const dir = s.dir;
  const outName = `seg-m${Date.now().toString(36)}-${randomBytes(4).toString('hex')}.seg`;
  const tmp = path.join(dir, `${outName}.tmp`);
  const opts = { tiers: s.opts.tiers, minTierList: s.opts.minTierList };
  /** @type {import('./native.js').BuildResult | null} */
  let r;
  try {
    r = await s.addon.mergeSegmentsAsync(tmp,
      inputs.map((seg) => ({ path: path.join(dir, seg.name), delPath: seg.del ? path.join(dir, seg.del) : null })), opts);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw wrapNative(err, dir);
  }
  try {
    await s.withLock(async () => {
      if (s.closed) throw new Error('closed');
      refresh(s, true);
      const cur = s.manifest;
      const names = new Set(inputs.map((seg) => seg.name));
      const present = cur.segments.filter((seg) => names.has(seg.name));
      if (present.length !== inputs.length) throw new Error('merge inputs vanished (another merge ran without MERGE.lock?)');
      const gen = cur.generation + 1;
      /** @type {string[]} */
      const obsolete = [s.manifestName];
      for (const seg of inputs) {
        obsolete.push(seg.name);
        const now = cur.segments.find((x) => x.name === seg.name);
        if (now?.del) obsolete.push(now.del);
        if (seg.del && seg.del !== now?.del) obsolete.push(seg.del);
      }
      /** @type {import('./files.js').SegmentEntry | null} */
      let out = null;
      if (r) {
        // Deletions published since the merge started: map them to the new segment by id.
        /** @type {string[]} */
        const lateIds = [];
        for (const seg of inputs) {
          const now = /** @type {import('./files.js').SegmentEntry} */ (cur.segments.find((x) => x.name === seg.name));
          if (now.del === seg.del) continue;
          const before = seg.del ? readDeletions(path.join(dir, seg.del), seg.docs) : null;
          const after = readDeletions(path.join(dir, /** @type {string} */ (now.del)), seg.docs);
          const locals = newlyDeleted(before, after);
          if (locals.length) lateIds.push(...s.addon.segmentIds(path.join(dir, seg.name), locals));
        }
        fs.renameSync(tmp, path.join(dir, outName));
        out = { name: outName, docs: r.docs, nnz: r.nnz, bytes: r.bytes, postingsBytes: r.postingsBytes, del: null, deleted: 0 };
        if (lateIds.length) {
          const pos = s.addon.segmentLookup(path.join(dir, outName), lateIds);
          const locals = Uint32Array.from([...pos].filter((x) => x >= 0));
          if (locals.length) {
            out.del = `${outName}.del-${gen}`;
            out.deleted = await writeDeletions(dir, out.del, r.docs, null, locals);
          }
        }
      }
      /** @type {import('./files.js').SegmentEntry[]} */
      const segments = [];
      let placed = false;
      for (const seg of cur.segments) {
        if (!names.has(seg.name)) { segments.push(seg); continue; }
        if (!placed && out) segments.push(out);
        placed = true;
      }
      if (!out) await fsyncDirAsync(dir);
      await publishManifestAsync(dir, { format: FORMAT, generation: gen, wal: cur.wal, segments }, (name) => loadManifest(s, name));
      await removeFiles(dir, obsolete);
      await removeFiles(dir, unreferenced(s)); // holding LOCK and MERGE.lock: nothing else can be writing files
    });
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    if (s.closed) return;
    throw err;
  }
}

/**
 * Removes what the live manifest does not reference: temp files, old WALs and manifests, orphaned segments
 * and deletion files (left by a crash, or by a flush that ran during a merge). Only while holding LOCK and
 * MERGE.lock: then no other process is writing any of them.
 * @param {EngineState} state
 */
export function cleanup(state) {
  for (const f of unreferenced(state)) fs.rmSync(path.join(state.dir, f), { force: true });
}

/**
 * The files of the folder the live manifest does not reference (cleanup's list).
 * @param {EngineState} s
 * @returns {string[]}
 */
function unreferenced(s) {
  const m = s.manifest;
  const keep = new Set([s.manifestName, walName(m.wal)]);
  for (const seg of m.segments) {
    keep.add(seg.name);
    if (seg.del) keep.add(seg.del);
  }
  return fs.readdirSync(s.dir).filter((f) => !keep.has(f) && (/^(seg-|wal-|MANIFEST-)/.test(f) || /\.tmp/.test(f)));
}

/**
 * Removes files of the folder on the libuv pool, side by side. Unlinking a large segment holds the calling thread
 * while the file system frees its blocks and cached pages: milliseconds that a serving process's event loop, which
 * runs flushes and publishes merges, must not wait through (they were 157 ms in 7 s of 20 writes/s, in pieces of
 * ~1 ms: BENCHMARKS.md "Writes beside reads").
 * @param {string} dir
 * @param {string[]} names
 */
async function removeFiles(dir, names) {
  await Promise.all(names.map((f) => fs.promises.rm(path.join(dir, f), { force: true })));
}
