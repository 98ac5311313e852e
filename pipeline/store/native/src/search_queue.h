// The store's own search threads: every async search of the addon (searchAsync, searchIdsAsync, the re-ranked
// related lists) runs there, not on libuv's pool.
//
// Why not the libuv pool (issue 15, BENCHMARKS.md session 14): a search put on the pool wakes a pool thread per
// call, and the woken thread preempted the event loop that woke it, so the loop — which every answer and every
// next search waits for — sat in the run queue behind a search while the other core idled (~14 % of a live
// related load). Here a thread that finishes a search takes the next queued one without the loop, waking a
// thread costs nothing while they are all busy, and the threads are SCHED_BATCH (Linux): the same share of the
// CPU as any thread, but a wakeup never preempts the running one. The libuv pool is left to the store's file
// work (a write's WAL append and fdatasync, flushes, merges), which no longer queues behind searches.
#pragma once
#include <napi.h>

#include <cstdint>
#include <memory>
#include <string>

namespace scdv::js {

/**
 * One search handed to the search threads: Execute() runs there (no JavaScript), then Result() on the event loop
 * of the environment that queued it, whose promise it settles. An exception from Execute() rejects the promise
 * with its message.
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
  bool failed_ = false;
  std::string error_;
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
