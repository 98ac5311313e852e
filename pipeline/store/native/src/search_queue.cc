// The store's search threads (search_queue.h): one process-wide queue, threads started as searches need them
// (at most setSearchThreads), each search's promise settled on the event loop that queued it through a
// thread-safe function of that environment.
#include "search_queue.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

#ifdef __linux__
#include <pthread.h>
#endif

#include "addon_js.h"
#include "thread_yield.h"

namespace scdv::js {

namespace {

void check(napi_env env, napi_status s) {
  if (s != napi_ok) throw Napi::Error::New(env, "search queue: a Node-API call failed");
}

/**
 * One JavaScript environment's end of the queue (Node runs one per JS thread: the main one, each Worker). Settled
 * searches come back through its thread-safe function, which keeps the process alive only while searches of this
 * environment are pending.
 */
struct EnvLink {
  std::mutex mu;
  bool open = true;  // false from the environment's teardown on: a search finishing later is dropped, not settled
  napi_threadsafe_function tsfn = nullptr;
  napi_async_context ctx = nullptr;
  napi_ref resource = nullptr;
  uint64_t pending = 0;  // queued and not yet settled (event loop only)
};

struct Queued {
  std::unique_ptr<SearchJob> job;
  std::shared_ptr<EnvLink> link;
};

}  // namespace

/** Runs a job's two halves: its Execute() on a search thread, its promise's settling on the loop. */
struct SearchJobRunner {
  static Napi::Promise promise(SearchJob& j) { return j.deferred_.Promise(); }
  static void execute(SearchJob& j) {
    try {
      j.Execute();
    } catch (...) {
      j.error_ = std::current_exception();
    }
  }
  static void settle(Napi::Env env, SearchJob& j) {
    try {
      if (j.error_) std::rethrow_exception(j.error_);
      j.deferred_.Resolve(j.Result(env));
    } catch (const Napi::Error& e) {
      j.deferred_.Reject(e.Value());
    } catch (const std::exception& e) {
      j.deferred_.Reject(toJsError(env, e).Value());  // a StoreError keeps its code, as from the synchronous call
    } catch (...) {
      j.deferred_.Reject(Napi::Error::New(env, "search failed").Value());
    }
  }
};

namespace {

/** A finished search, back on its environment's loop (env null: the environment is being torn down). */
void settleOnLoop(napi_env env, napi_value, void* context, void* data) {
  std::unique_ptr<SearchJob> job(static_cast<SearchJob*>(data));
  if (env == nullptr) return;  // the link may be gone already: touch nothing but the job
  auto* link = static_cast<EnvLink*>(context);
  if (--link->pending == 0) napi_unref_threadsafe_function(env, link->tsfn);
  // A callback scope, as libuv completions get: promise reactions run when it closes — before the handle scope its
  // resource lives in (declared after it, so destroyed first).
  struct Scope {
    napi_env env;
    napi_callback_scope scope = nullptr;
    ~Scope() {
      if (scope) napi_close_callback_scope(env, scope);
    }
  };
  try {
    Napi::Env e(env);
    Napi::HandleScope hs(e);
    Scope cs{env};
    napi_value resource;
    if (napi_get_reference_value(env, link->resource, &resource) == napi_ok) napi_open_callback_scope(env, resource, link->ctx, &cs.scope);
    SearchJobRunner::settle(e, *job);
  } catch (...) {
    // Settling failed (an environment that can no longer run JavaScript: a Worker being terminated). Nothing is
    // left to tell; an exception must not leave this C callback.
  }
}

/** The environment's teardown: no search settles through it from now on. */
void closeLink(napi_env env, void* finalizeData, void*) {
  auto* holder = static_cast<std::shared_ptr<EnvLink>*>(finalizeData);
  EnvLink& link = **holder;
  {
    std::lock_guard<std::mutex> g(link.mu);
    link.open = false;
  }
  if (link.ctx) napi_async_destroy(env, link.ctx);
  if (link.resource) napi_delete_reference(env, link.resource);
  delete holder;
}

thread_local std::shared_ptr<EnvLink> tLink;  // this JS thread's environment's link

std::shared_ptr<EnvLink> linkFor(Napi::Env env) {
  if (tLink && tLink->open) return tLink;
  auto link = std::make_shared<EnvLink>();
  Napi::String name = Napi::String::New(env, "scdv-store-search");
  Napi::Object resource = Napi::Object::New(env);
  check(env, napi_create_reference(env, resource, 1, &link->resource));
  check(env, napi_async_init(env, resource, name, &link->ctx));
  check(env, napi_create_threadsafe_function(env, nullptr, nullptr, name, 0, 1, new std::shared_ptr<EnvLink>(link), closeLink,
                                             link.get(), settleOnLoop, &link->tsfn));
  check(env, napi_unref_threadsafe_function(env, link->tsfn));
  tLink = link;
  return link;
}

/**
 * The search threads' niceness, counted from the event loop's (thread_yield.h): below the event loop and the embedding threads, which answer requests and whose
 * turns are short, so that a busy core goes to them first and to searches meanwhile. Against 0, with 20 writes/s
 * beside live related: write p99 42 vs 49 ms (lower in every round); live related alone 0.92x the req/s (the loop
 * takes requests in smaller batches) (BENCHMARKS.md "Search threads").
 */
constexpr int kSearchNice = 3;

void becomeSearchThread() {
  // SCHED_BATCH: never preempting a thread on wakeup (the event loop above all). Before the name, so that a thread
  // named scdv-search is always one that gives way.
  scdv_native::giveWayToOtherThreads(kSearchNice);
#ifdef __linux__
  pthread_setname_np(pthread_self(), "scdv-search");
#endif
}

/** The queue and its threads; never destroyed (detached threads wait on it). */
class SearchThreads {
 public:
  static SearchThreads& get() {
    static SearchThreads* threads = new SearchThreads();
    return *threads;
  }

  void post(Queued q) {
    std::unique_lock<std::mutex> l(mu_);
    q_.push_back(std::move(q));
    if (idle_ > waking_) {
      waking_++;
      l.unlock();
      cv_.notify_one();
    } else if (threads_ < limit_) {
      threads_++;
      try {
        std::thread([this] { loop(); }).detach();
      } catch (const std::system_error&) {
        // No thread to be had (a process limit): the running threads take the search; with none, it fails now.
        threads_--;
        if (threads_ == 0) {
          q_.pop_back();
          throw;
        }
      }
    }
    // else: every thread is busy; the first to finish takes it, no wakeup needed.
  }

  void setLimit(uint32_t n) {
    {
      std::lock_guard<std::mutex> g(mu_);
      limit_ = std::max<uint32_t>(1, n);
    }
    cv_.notify_all();  // threads over the limit stop once the queue is empty
  }

  SearchQueueUse use() {
    std::lock_guard<std::mutex> g(mu_);
    return {limit_, threads_, running_, static_cast<uint32_t>(q_.size()), mostRunning_};
  }

 private:
  void loop() {
    becomeSearchThread();
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
      while (q_.empty() && threads_ <= limit_) {
        idle_++;
        cv_.wait(l);
        idle_--;
        if (waking_ > 0) waking_--;
      }
      if (q_.empty()) {
        threads_--;
        return;
      }
      Queued q = std::move(q_.front());
      q_.pop_front();
      running_++;
      mostRunning_ = std::max(mostRunning_, running_);
      l.unlock();
      SearchJobRunner::execute(*q.job);
      l.lock();
      running_--;  // before the answer can reach the loop: a settled search never counts as running
      l.unlock();
      deliver(std::move(q));
      l.lock();
    }
  }

  static void deliver(Queued q) {
    std::unique_lock<std::mutex> g(q.link->mu);
    if (!q.link->open) return;  // its environment is gone: dropped (the job's destructor runs here)
    SearchJob* job = q.job.release();
    if (napi_call_threadsafe_function(q.link->tsfn, job, napi_tsfn_nonblocking) != napi_ok) {
      g.unlock();
      delete job;
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Queued> q_;
  uint32_t limit_ = std::max(1u, std::thread::hardware_concurrency());
  uint32_t threads_ = 0, idle_ = 0, waking_ = 0, running_ = 0, mostRunning_ = 0;
};

}  // namespace

Napi::Promise queueSearchJob(Napi::Env env, std::unique_ptr<SearchJob> job) {
  std::shared_ptr<EnvLink> link = linkFor(env);
  EnvLink& l = *link;
  Napi::Promise p = SearchJobRunner::promise(*job);
  if (l.pending++ == 0) check(env, napi_ref_threadsafe_function(env, l.tsfn));
  try {
    SearchThreads::get().post({std::move(job), std::move(link)});
  } catch (...) {
    if (--l.pending == 0) napi_unref_threadsafe_function(env, l.tsfn);
    throw;
  }
  return p;
}

void setSearchThreads(uint32_t n) { SearchThreads::get().setLimit(n); }

SearchQueueUse searchQueueUse() { return SearchThreads::get().use(); }

}  // namespace scdv::js
