// An engine's write path: the in-process queue of upserts, deletes and flush requests, and group commit —
// whatever queued while the previous group was written goes out together under LOCK, one WAL record per call,
// one write and one fdatasync, acknowledged before any flush work (then the flush and merge policies run).
// Functions of the engine's shared state (engine-state.js).
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { walName } from './files.js';
import { collapse, encodeDelete, encodeUpsert } from './wal.js';
import { apply, refresh, truncateTornTail } from './engine-view.js';
import { flushLocked, maybeAutoMerge, shouldFlush } from './engine-maintenance.js';

const fsWrite = promisify(fs.write);
const fsDatasync = promisify(fs.fdatasync);

/** @typedef {import('./engine-state.js').EngineState} EngineState */
/** @typedef {import('./engine-state.js').Pending} Pending */

/**
 * Queues a write; it resolves once durable (a delete: with the number of ids that were live).
 * @param {EngineState} state
 * @param {import('./engine-state.js').WriteJob} job
 * @returns {Promise<unknown>}
 */
export function enqueue(state, job) {
  state.checkOpen();
  return new Promise((resolve, reject) => {
    state.pending.push({ job, resolve, reject });
    if (!state.writing) void writeLoop(state);
  });
}

/** @param {EngineState} s */
async function writeLoop(s) {
  s.writing = true;
  try {
    while (s.pending.length) {
      const group = s.pending.splice(0);
      /** @type {unknown[]} */
      let results = [];
      let flushWanted = false;
      try {
        await s.withLock(async () => {
          refresh(s, true);
          truncateTornTail(s);
          results = await appendGroup(s, group);
          // The writes are durable now: acknowledge them before any flush work.
          group.forEach((g, i) => { if (g.job.kind !== 'flush') g.resolve(results[i]); });
          const forced = group.some((g) => g.job.kind === 'flush' && g.job.force);
          if (forced || shouldFlush(s)) {
            try {
              await flushLocked(s);
            } catch (err) {
              if (forced) throw err;
              s.backgroundError(err);
            }
          }
          flushWanted = true;
        });
        for (const g of group) if (g.job.kind === 'flush') g.resolve(undefined);
      } catch (err) {
        for (const g of group) g.reject(err); // no-op for the ones already resolved
      }
      if (flushWanted) maybeAutoMerge(s);
    }
  } finally {
    s.writing = false;
    s.maybeRelease();
  }
}

/**
 * Under LOCK, with the view refreshed: one WAL record per upsert/delete call, one write + fdatasync.
 * @param {EngineState} s
 * @param {Pending[]} group
 * @returns {Promise<unknown[]>} per job: undefined (upsert, flush) or the number deleted
 */
async function appendGroup(s, group) {
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
      const live = s.view.live(unknown);
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
  if (s.walWriteFd < 0) s.walWriteFd = fs.openSync(path.join(s.dir, walName(s.walSeq)), 'r+');
  const fd = s.walWriteFd;
  const at = s.walOffset;
  s.appending = true;
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
    s.appending = false;
  }
  s.walOffset = at + data.length;
  s.walOps += entries;
  if (!s.walFirstTime) s.walFirstTime = now;
  apply(s, collapse(records));
  return results;
}
