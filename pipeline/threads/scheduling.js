// How a thread of this process shares the cores with the others: the loader of the scdv_threads addon
// (pipeline/threads/native/build/Release/scdv_threads.node) and the two things it does for the calling thread.
// The addon is loaded on first use, so importing this module never fails on a machine without it.
// The store's search threads take the same scheduling in C++ (native/include/thread_yield.h); this module is for the
// JS threads that ask for it (the write-embedding threads, pipeline/embed/pool-worker.js).
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { errors } from '../errors.js';

export const ADDON_PATH = fileURLToPath(new URL('./native/build/Release/scdv_threads.node', import.meta.url));

/**
 * @typedef {object} ThreadYield what yieldThisThread obtained
 * @property {boolean} batch the thread is SCHED_BATCH (Linux)
 * @property {number | null} nice its niceness now (null: not Linux)
 */

/**
 * @typedef {object} PaceSettings
 * @property {number} sliceUs how often (wall time) a paced thread checks its pace, 50-1e6
 * @property {number} share the most CPU it takes of a section's wall time, (0, 1]
 * @property {number} budgetMs how long a section is paced at most (then it runs freely), 0-1e5
 */

/**
 * @typedef {object} PacedSection what a paced section took
 * @property {number} pauses
 * @property {number} pausedMs
 * @property {number} wallMs the section's wall time
 * @property {number} cpuMs the thread's CPU time in the section
 */

/**
 * @typedef {object} ThreadPacer paced sections of the thread that made it (native/src/thread_pacing.cc)
 * @property {() => void} begin a section starts: while `busy[0]` > 0 the thread takes at most `share` of its wall
 *   time in CPU, for at most budgetMs
 * @property {() => PacedSection} end the section ends: its pauses, wall and CPU time
 */

/** @typedef {{ yieldToOtherThreads: (nice: number) => ThreadYield, paceThisThread: (busy: Int32Array, pace: PaceSettings) => boolean,
 *   beginPaced: () => boolean, endPaced: () => PacedSection }} Addon */

/** @type {Addon | undefined} */
let addon;

/** @returns {Addon} */
function loadAddon() {
  if (addon) return addon;
  if (!existsSync(ADDON_PATH)) throw errors.THREADS_ADDON_NOT_BUILT(`${ADDON_PATH} is missing`);
  try {
    addon = /** @type {Addon} */ (createRequire(import.meta.url)(ADDON_PATH));
  } catch (err) {
    throw errors.THREADS_ADDON_NOT_BUILT(`cannot load ${ADDON_PATH}: ${/** @type {Error} */ (err).message}`).because(err);
  }
  return addon;
}

/**
 * The calling thread gives way to the process's other threads: SCHED_BATCH (on waking it never preempts the thread
 * that woke it, the event loop above all) at `nice` more niceness than the process's main thread (the event loop),
 * at most 19, or the thread's own if higher (Linux; elsewhere nothing changes). Counted from the main thread, so
 * that a process started under `nice` keeps the order of its threads. For the threads that embed written documents: MeCab's milliseconds per article otherwise start on the
 * event loop's core the moment the loop posts the text (BENCHMARKS.md).
 * @param {number} nice 0-19: niceness above the main thread's
 * @returns {ThreadYield}
 */
export function yieldThisThread(nice) {
  return loadAddon().yieldToOtherThreads(nice);
}

/**
 * Pace the calling thread's sections while others are busy: between begin() and end(), while `busy[0]` > 0, every
 * sliceUs the thread sleeps until the section's CPU is at most `share` of its wall time, for at most budgetMs of the
 * section (native/src/thread_pacing.cc). For threads whose bursts of CPU would hold up latency-bound work beside
 * them. null where pacing is not available (not Linux, or the real-time signal it uses has another handler):
 * sections then run unpaced.
 * @param {Int32Array} busy a counter on a SharedArrayBuffer: above 0, pause
 * @param {PaceSettings} pace
 * @returns {ThreadPacer | null}
 */
export function paceThisThread(busy, pace) {
  const native = loadAddon();
  if (!native.paceThisThread(busy, pace)) return null;
  return { begin: () => { native.beginPaced(); }, end: () => native.endPaced() };
}
