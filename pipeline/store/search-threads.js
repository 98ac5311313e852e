// How many threads run this process's async searches: the store's own threads (native/src/search_queue.h), not
// libuv's pool, which is left to the store's file work (a write's WAL append and fdatasync, flushes, merges).
import os from 'node:os';

/**
 * The most searches of this process running at once: one per core the process may use (searches beyond wait in the
 * store's queue, in order). A thread that finishes a search takes the next one itself, so no core waits for the
 * event loop to hand one on; a thread more than the cores (as the libuv pool's lanes had) was no faster on 2 cores
 * and made each search dearer (ten paired rounds, median 0.95x the req/s: BENCHMARKS.md "Search threads").
 */
export const searchThreads = () => os.availableParallelism();

/**
 * This process's searches in flight (queued for or running on the search threads): one Int32 in shared memory, so
 * that threads which should give way to searches can read it without a message (the write-embedding threads:
 * server.writePace, pipeline/threads/native/src/thread_pacing.cc). Counted by engine.js for every async search.
 */
export const searchesInFlight = new Int32Array(new SharedArrayBuffer(4));
