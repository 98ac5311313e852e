// This process's holds on collections' LOCK files. flock excludes open file descriptions, not processes: two
// descriptors of one process on the same LOCK exclude each other, so a synchronous flock on the event loop while
// another descriptor of this process holds it (a write group between its awaits, a drop) waits for ever — the
// holder needs the event loop to let go. Every LOCK of this process is therefore taken through here: in-process
// holders queue on a promise per LOCK file (by device and inode), and only then take the flock, which can then
// wait only for other processes (on the thread pool; synchronously only where nothing of this process holds it).

import fs from 'node:fs';

/** @typedef {{holders: number, tail: Promise<void>}} Entry holders: those holding or waiting for the lock */

/** @type {Map<string, Entry>} */
const entries = new Map();

/** @param {number} fd */
function keyOf(fd) {
  const st = fs.fstatSync(fd);
  return `${st.dev}:${st.ino}`;
}

/**
 * @param {string} key
 * @returns {Entry}
 */
function entry(key) {
  let e = entries.get(key);
  if (!e) {
    e = { holders: 0, tail: Promise.resolve() };
    entries.set(key, e);
  }
  return e;
}

/** @param {string} key */
function leave(key) {
  const e = /** @type {Entry} */ (entries.get(key));
  if (--e.holders === 0) entries.delete(key);
}

/**
 * Takes the exclusive lock on a LOCK descriptor after this process's earlier holders of the same file let go;
 * a lock held by another process is waited for on the thread pool. Resolves with the function that releases it.
 * @param {import('./native.js').Addon} addon
 * @param {number} fd
 * @returns {Promise<() => void>}
 */
export async function lockAsync(addon, fd) {
  const key = keyOf(fd);
  const e = entry(key);
  e.holders++;
  const prev = e.tail;
  /** @type {() => void} */
  let done = () => {};
  e.tail = new Promise((r) => { done = r; });
  let locked = false;
  try {
    await prev;
    if (!addon.flock(fd, 'exnb')) await addon.flockAsync(fd, 'ex');
    locked = true;
  } finally {
    if (!locked) {
      done();
      leave(key);
    }
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    try {
      addon.flock(fd, 'un');
    } finally {
      done();
      leave(key);
    }
  };
}

/**
 * Takes the exclusive lock now, or returns null without waiting when this process already holds or waits for
 * the same LOCK file (then wait for whenFree() and try again). Only a lock of another process is waited for here,
 * synchronously: that process lets go without this one's event loop.
 * @param {import('./native.js').Addon} addon
 * @param {number} fd
 * @returns {(() => void) | null}
 */
export function lockSync(addon, fd) {
  const key = keyOf(fd);
  if (entries.has(key)) return null;
  addon.flock(fd, 'ex');
  const e = entry(key);
  e.holders++;
  /** @type {() => void} */
  let done = () => {};
  e.tail = new Promise((r) => { done = r; });
  let released = false;
  return () => {
    if (released) return;
    released = true;
    try {
      addon.flock(fd, 'un');
    } finally {
      done();
      leave(key);
    }
  };
}

/**
 * Resolves once no holder of this process that exists now holds the LOCK at `file` (at once when none does, or
 * when the file is gone).
 * @param {string} file
 * @returns {Promise<void>}
 */
export async function whenFree(file) {
  let key;
  try {
    const st = fs.statSync(file);
    key = `${st.dev}:${st.ino}`;
  } catch {
    return;
  }
  await entries.get(key)?.tail;
}
