// How many threads run this process's async searches: the store's own threads (native/src/search_queue.h), not
// libuv's pool, which is left to the store's file work (a write's WAL append and fdatasync, flushes, merges).
import os from 'node:os';

/**
 * Search threads beyond one per core the process may use: with one per core a core idled whenever its thread
 * waited (a page of a mapped segment not in memory yet, the lock of a snapshot); one more keeps a search ready for
 * it (BENCHMARKS.md, session 14).
 */
export const EXTRA_SEARCH_THREADS = 1;

/** The most searches of this process running at once (searches beyond wait in the store's queue, in order). */
export const searchThreads = () => os.availableParallelism() + EXTRA_SEARCH_THREADS;
