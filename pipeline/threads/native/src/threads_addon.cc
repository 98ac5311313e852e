// scdv_threads: how a thread of this process shares the cores with the others, for the JS threads that ask
// (pipeline/threads/scheduling.js): yieldToOtherThreads (thread_yield.cc) and paced sections (thread_pacing.cc).
// Its own addon, not a part of the MeCab binding or the store: the embedding threads that use it tokenise, but
// nothing here is about tokens, and the store's search threads take the same policy in C++ from
// include/thread_yield.h, which both addons compile.
#include <napi.h>

#include "threads_addon.h"

namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  using namespace scdv_threads;
  exports.Set("yieldToOtherThreads", Napi::Function::New(env, YieldToOtherThreads, "yieldToOtherThreads"));
  exports.Set("paceThisThread", Napi::Function::New(env, PaceThisThread, "paceThisThread"));
  exports.Set("beginPaced", Napi::Function::New(env, BeginPaced, "beginPaced"));
  exports.Set("endPaced", Napi::Function::New(env, EndPaced, "endPaced"));
  return exports;
}

}  // namespace

NODE_API_MODULE(scdv_threads, Init)
