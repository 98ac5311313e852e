// How many searches of this process run on the libuv thread pool at once. searchAsync and the store's file work
// (a write's WAL append and fdatasync, a flush's files and segment build, a merge) share that pool, whose queue
// is first come, first served: under a live read load it is full of searches, so every round trip of a write
// waited behind all of them (issue 15: a PUT makes two, a flush several). Searches beyond `searchLanes()` wait
// here, in order, so `RESERVED_IO_LANES` pool threads stay free for the store's writes.
// The pool's size is decided in thread-pool.cjs (set before any ES module loads, by `pipeline/scdv.cjs`).
import threadPool from './thread-pool.cjs';

/** Pool threads kept free of searches. */
export const RESERVED_IO_LANES = threadPool.RESERVED_IO_LANES;

/**
 * The libuv pool's size: UV_THREADPOOL_SIZE as this module found it (libuv read it when the pool started, before
 * any ES module loaded; default 4, at most 1024).
 */
const POOL_SIZE = (() => {
  const n = Number.parseInt(process.env.UV_THREADPOOL_SIZE ?? '', 10);
  return Number.isFinite(n) && n > 0 ? Math.min(n, 1024) : 4;
})();

/** The libuv pool's size. */
export const poolSize = () => POOL_SIZE;

/** Searches that may be on the pool at once: its size less the reserved lanes, at least 1. */
export const searchLanes = () => Math.max(1, poolSize() - RESERVED_IO_LANES);

let running = 0;
/** @type {(() => void)[]} */
const waiting = [];

/**
 * Run `fn` (which puts one search on the pool) once fewer than searchLanes() searches of this process are running.
 * @template T
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export async function inSearchLane(fn) {
  if (running >= searchLanes()) await new Promise((/** @type {(v?: unknown) => void} */ resolve) => { waiting.push(resolve); });
  else running++;
  try {
    return await fn();
  } finally {
    const next = waiting.shift();
    if (next) next(); // the slot passes on: `running` is unchanged
    else running--;
  }
}

/** Searches running and waiting (for tests and stats). */
export const searchLaneUse = () => ({ running, waiting: waiting.length, lanes: searchLanes() });
