// The libuv thread pool's size for this machine. CommonJS, because it must be set before the first ES module
// loads: libuv reads UV_THREADPOOL_SIZE once, when the pool is first used, and Node's ES module loader reads
// module files through the pool. `pipeline/scdv.cjs` (the `scdv` command) and the bench servers' parent set it;
// an ES module setting the variable is too late (the pool keeps libuv's default of 4).
'use strict';

/** Pool threads kept free of searches (search-lanes.js): a write's WAL append and fdatasync, a flush, a merge. */
const RESERVED_IO_LANES = 2;

/**
 * Search lanes beyond one per core. A search is CPU-bound, but with a lane per core the cores idled 18 % of a live
 * related load: a lane is handed on only when the event loop gets to the finished search's completion, and its core
 * waits meanwhile. One more keeps a search ready for it (idle 14 %, +12 % req/s; BENCHMARKS.md, session 12).
 */
const EXTRA_SEARCH_LANES = 1;

/**
 * The pool for `cores`: a search lane per core, EXTRA_SEARCH_LANES, and the reserved lanes; at least libuv's 4, at
 * most its 1,024 (libuv's default of 4 would hold a many-core server to 2 searches at once).
 * @param {number} cores
 * @returns {number}
 */
function threadPoolSize(cores) {
  return Math.min(1024, Math.max(4, cores + EXTRA_SEARCH_LANES + RESERVED_IO_LANES));
}

/**
 * UV_THREADPOOL_SIZE of `env` for `cores`, unless it is set already.
 * @param {number} cores
 * @param {NodeJS.ProcessEnv} [env]
 */
function sizeThreadPool(cores, env = process.env) {
  env.UV_THREADPOOL_SIZE ??= String(threadPoolSize(cores));
}

module.exports = { RESERVED_IO_LANES, EXTRA_SEARCH_LANES, threadPoolSize, sizeThreadPool };
