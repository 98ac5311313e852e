// The store's own search threads: every async search of the addon (searchAsync, searchIdsAsync, the re-ranked
// related lists) runs there, not on libuv's pool.
//
// Why not the libuv pool (BENCHMARKS.md "Search threads"): there every search woke a pool thread, and the
// scheduler put the woken thread on the waker's core — beside the event loop, often preempting it — while the other
// core could sit idle: 14 % of a live related load on 2 cores, with any number of searches let onto the pool. Here
// a thread that finishes a search takes the next queued one itself, so under load the threads do not sleep and
// queueing wakes nobody (idle 7 %, +20 % req/s). The threads are SCHED_BATCH on Linux — a wakeup never preempts
// the running thread (the event loop above all; measured alone: idle 5.5 → 4.0 %, req/s the same within noise) —
// at 3 more niceness than the event loop (search_queue.cc: kSearchNice). The libuv pool is left to the store's file work (a write's WAL
// append and fdatasync, flushes, merges), which no longer queues behind searches.
#pragma once
#include <napi.h>

#include <cstdint>
#include <exception>
#include <memory>

namespace scdv::js {

/**
 * One search handed to the search threads: Execute() runs there (no JavaScript), then Result() on the event loop
 * of the environment that queued it, whose promise it settles. An exception from Execute() rejects the promise
 * as the synchronous call's would (a StoreError keeps its code).
 */
class SearchJob {
 public:
  explicit SearchJob(Napi::Env env) : deferred_(Napi::Promise::Deferred::New(env)) {}
  virtual ~SearchJob() = default;
  SearchJob(const SearchJob&) = delete;
  SearchJob& operator=(const SearchJob&) = delete;

  /** On a search thread. */
  virtual void Execute() = 0;
  /** On the event loop, after Execute() returned: the promise's value. */
  virtual Napi::Value Result(Napi::Env env) = 0;

 private:
  friend struct SearchJobRunner;
  Napi::Promise::Deferred deferred_;
  std::exception_ptr error_;  // what Execute() threw
};

/** Queue `job` (on the event loop): the returned promise settles on this loop. */
Napi::Promise queueSearchJob(Napi::Env env, std::unique_ptr<SearchJob> job);

/** At most `n` search threads (process-wide, at least 1); threads start as searches need them. */
void setSearchThreads(uint32_t n);

struct SearchQueueUse {
  uint32_t limit = 0;        // setSearchThreads
  uint32_t threads = 0;      // started and not stopped
  uint32_t running = 0;      // searches executing now
  uint32_t queued = 0;       // waiting for a thread
  uint32_t mostRunning = 0;  // the most executing at once since the process started
};
SearchQueueUse searchQueueUse();

}  // namespace scdv::js
