// yieldToOtherThreads(nice): the calling thread becomes one that gives way to the process's other threads. For the
// embedding threads (pipeline/embed/pool-worker.js), which run MeCab and would otherwise take a core from the event
// loop that woke them.
#include "thread_yield.h"

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#endif

namespace scdv_mecab {

Napi::Value YieldToOtherThreads(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(env, "yieldToOtherThreads(nice): nice must be a number 0-19");
  const int nice = info[0].As<Napi::Number>().Int32Value();
  if (nice < 0 || nice > 19) throw Napi::RangeError::New(env, "yieldToOtherThreads(nice): nice must be a number 0-19");
  Napi::Object done = Napi::Object::New(env);
#if defined(__linux__)
  // SCHED_BATCH: a thread that never preempts the running one when it wakes. A worker thread woken by a message
  // from the event loop otherwise takes the loop's core at once (the loop's postMessage returned after 2–4 ms in
  // one write of ten: BENCHMARKS.md, session 16). Refused (a restricted sandbox): the thread stays SCHED_OTHER.
  sched_param sp{};
  const bool batch = pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp) == 0;
  // On Linux a thread's niceness is its own; never below the process's (lowering it needs privileges).
  const id_t tid = static_cast<id_t>(::syscall(SYS_gettid));
  errno = 0;
  const int current = ::getpriority(PRIO_PROCESS, tid);
  bool niced = false;
  if (errno == 0) niced = ::setpriority(PRIO_PROCESS, tid, std::max(current, nice)) == 0;
  done.Set("batch", Napi::Boolean::New(env, batch));
  done.Set("nice", Napi::Number::New(env, niced ? std::max(current, nice) : current));
#else
  done.Set("batch", Napi::Boolean::New(env, false));
  done.Set("nice", env.Null());
#endif
  return done;
}

}  // namespace scdv_mecab
