// The calling thread's scheduling, for JS: the functions scdv_threads exports (threads_addon.cc).
#pragma once

#include <napi.h>

namespace scdv_threads {

/** yieldToOtherThreads(nice) -> {batch: boolean, nice: number | null}: SCHED_BATCH and at least `nice` (Linux). */
Napi::Value YieldToOtherThreads(const Napi::CallbackInfo& info);
/** paceThisThread(busy: Int32Array (shared), {sliceUs, share, budgetMs}) -> boolean: false where unavailable. */
Napi::Value PaceThisThread(const Napi::CallbackInfo& info);
/** beginPaced() -> boolean: a paced section of this thread starts (false: the thread is not paced). */
Napi::Value BeginPaced(const Napi::CallbackInfo& info);
/** endPaced() -> {pauses, pausedMs, wallMs, cpuMs}: the section ends; its pauses, wall time and the thread's CPU. */
Napi::Value EndPaced(const Napi::CallbackInfo& info);

}  // namespace scdv_threads
