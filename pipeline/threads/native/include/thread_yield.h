// giveWayToOtherThreads(nice): the calling thread becomes one that gives way to the process's other threads —
// SCHED_BATCH (on waking it never preempts the running thread, the event loop above all) at `nice` more niceness
// than the process's main thread (the event loop), at most 19, or its own if higher (Linux; elsewhere nothing
// changes). Counted from the main thread, so that a process started under `nice` keeps the order of its threads. Header-only, compiled into both addons that set a thread's
// scheduling: scdv_threads (src/thread_yield.cc, for the JS threads that embed written documents) and the store's
// search threads (pipeline/store/native/src/search_queue.cc). Setup rebuilds both when it changes
// (pipeline/setup/node-deps.js).
#pragma once

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#endif

namespace scdv_native {

/** What giveWayToOtherThreads obtained. */
struct ThreadYield {
  bool batch = false;  // the thread is SCHED_BATCH
  bool known = false;  // `nice` is the thread's niceness now (false: not Linux, or unreadable)
  int nice = 0;
};

inline ThreadYield giveWayToOtherThreads(int nice) {
  ThreadYield got;
#if defined(__linux__)
  // Refused (a restricted sandbox): the thread stays SCHED_OTHER.
  sched_param sp{};
  got.batch = pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp) == 0;
  // On Linux a thread's niceness is its own (PRIO_PROCESS names a thread id; the process id is the main thread's);
  // never below the thread's current one (lowering it needs privileges).
  const id_t tid = static_cast<id_t>(::syscall(SYS_gettid));
  errno = 0;
  const int current = ::getpriority(PRIO_PROCESS, tid);
  if (errno == 0) {
    errno = 0;
    int base = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::getpid()));
    if (errno != 0) base = current;
    const int want = std::max(current, std::min(19, base + nice));
    got.known = true;
    got.nice = ::setpriority(PRIO_PROCESS, tid, want) == 0 ? want : current;
  }
#else
  (void)nice;
#endif
  return got;
}

}  // namespace scdv_native
