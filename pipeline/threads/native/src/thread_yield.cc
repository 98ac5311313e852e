// yieldToOtherThreads(nice): the calling thread gives way to the process's other threads (the shared
// giveWayToOtherThreads, include/thread_yield.h). For the embedding threads
// (pipeline/embed/pool-worker.js), which run MeCab: a worker thread woken by a message from the event loop otherwise
// takes the loop's core at once (the loop's postMessage returned after 2–4 ms in one write of ten: BENCHMARKS.md
// "Writes beside reads").
#include "threads_addon.h"

#include "thread_yield.h"

namespace scdv_threads {

Napi::Value YieldToOtherThreads(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) throw Napi::TypeError::New(env, "yieldToOtherThreads(nice): nice must be a number 0-19");
  const int nice = info[0].As<Napi::Number>().Int32Value();
  if (nice < 0 || nice > 19) throw Napi::RangeError::New(env, "yieldToOtherThreads(nice): nice must be a number 0-19");
  const scdv_native::ThreadYield got = scdv_native::giveWayToOtherThreads(nice);
  Napi::Object done = Napi::Object::New(env);
  done.Set("batch", Napi::Boolean::New(env, got.batch));
  done.Set("nice", got.known ? Napi::Value(Napi::Number::New(env, got.nice)) : env.Null());
  return done;
}

}  // namespace scdv_threads
