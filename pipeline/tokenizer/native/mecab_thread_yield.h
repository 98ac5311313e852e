// The calling thread's scheduling, for JS (thread_yield.cc).
#pragma once

#include <napi.h>

namespace scdv_mecab {

/** yieldToOtherThreads(nice) -> {batch: boolean, nice: number | null}: SCHED_BATCH and at least `nice` (Linux). */
Napi::Value YieldToOtherThreads(const Napi::CallbackInfo& info);

}  // namespace scdv_mecab
