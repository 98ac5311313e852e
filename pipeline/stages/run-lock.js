// One run at a time per name: a lock file that dies with its process. Node has no flock, so the file records
// the holder's pid and start time (/proc/<pid>/stat): a lock whose process is gone, or whose pid now belongs to
// another process, is stale and taken over. Created with O_EXCL, so of two runs starting together one wins.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { errors } from '../errors.js';

/**
 * The process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), or null where there is no /proc.
 * @param {number} pid
 * @returns {string | null}
 */
export function processStartTime(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Whether the process that wrote the lock still runs (same pid and start time, on this host).
 * @param {{pid: number, start: string | null, host: string}} holder
 */
function holderAlive(holder) {
  if (!(holder.pid > 0)) return false;
  if (holder.host !== os.hostname()) return true; // another machine's run (a shared data folder): cannot tell, so respect it
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if (/** @type {any} */ (err).code !== 'EPERM') return false; // ESRCH: gone
  }
  const start = processStartTime(holder.pid);
  return start === null || holder.start === null || start === holder.start;
}

/**
 * @param {string} text a lock file's content
 * @returns {{pid: number, start: string | null, host: string, since?: string}}
 */
function parseHolder(text) {
  try {
    const h = JSON.parse(text);
    if (Number.isInteger(h.pid) && h.pid > 0) return h;
  } catch { /* damaged */ }
  return { pid: 0, start: null, host: os.hostname() };
}

/**
 * Take the lock `name` in `dir`, or fail with MODEL_BUSY naming the holder.
 * @param {string} dir folder of the lock files
 * @param {string} name model name
 * @returns {{file: string, release: () => void}}
 */
export function acquireRunLock(dir, name) {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.lock`);
  const mine = JSON.stringify({ pid: process.pid, start: processStartTime(process.pid), host: os.hostname(), since: new Date().toISOString() });
  // Written whole under a private name, then linked into place: link() fails when the lock exists, and a lock
  // file is never seen half-written.
  const tmp = `${file}.new-${process.pid}`;
  fs.writeFileSync(tmp, mine);
  try {
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        fs.linkSync(tmp, file);
        // A Ctrl-C ends the process through process.exit: the lock goes with it.
        const onExit = () => { if (readRaw(file) === mine) fs.rmSync(file, { force: true }); };
        process.on('exit', onExit);
        return { file, release: () => { process.off('exit', onExit); onExit(); } };
      } catch (err) {
        if (/** @type {any} */ (err).code !== 'EEXIST') throw err;
      }
      const text = readRaw(file);
      if (text === null) continue; // released meanwhile
      const holder = parseHolder(text);
      if (holderAlive(holder)) throw errors.MODEL_BUSY(name, holder.pid, holder.since ?? '?', file);
      takeOverStale(file, text);
    }
    throw errors.MODEL_BUSY(name, '?', '?', file);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** @param {string} file */
function readRaw(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Remove a stale lock without removing a fresh one that another run put in its place meanwhile: move it aside
 * (atomic, so of two runs taking over the same stale lock only one gets it), and put back what turns out not
 * to be the stale one.
 * @param {string} file
 * @param {string} staleText what was read as stale
 */
function takeOverStale(file, staleText) {
  const aside = `${file}.stale-${process.pid}`;
  try {
    fs.renameSync(file, aside);
  } catch {
    return; // someone else moved it first
  }
  const text = readRaw(aside);
  if (text !== null && text !== staleText && holderAlive(parseHolder(text))) {
    // A live run's lock: back where it was (link fails if yet another run created one meanwhile).
    try {
      fs.linkSync(aside, file);
    } catch { /* the new lock stands */ }
  }
  fs.rmSync(aside, { force: true });
}
