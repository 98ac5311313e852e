// Paced sections: while a section of the calling thread runs (an embedding job of a write thread,
// pipeline/embed/pool-worker.js) and a shared counter says reads are in flight, the thread checks every `sliceUs`
// of wall time whether its CPU in the section exceeds `share` of the section's wall time, and if so sleeps until it
// does not, until the section has lasted `budgetMs`; after that, and whenever no read is in flight, it runs freely.
// Measured in CPU, not in run and pause times: under load a thread that wakes waits for a core, and that wait
// counts as a pause. The point is the shape of a write's CPU, not its amount: unpaced, an article's
// embedding takes a core for ~5 ms, and the reads queued behind it on that core make the reads' p99 (BENCHMARKS.md
// "Writes under read load"); paced, the same CPU comes in slices the search threads interleave with.
//
// How: a one-shot POSIX timer on CLOCK_MONOTONIC, delivered to this thread only (SIGEV_THREAD_ID), whose handler
// sleeps and re-arms it. MeCab parses a text in one call, so the pauses must come from outside the call: a
// signal, not a callback (cutting the text would change the tokens at the cuts). The handler calls only
// async-signal-safe functions (clock_gettime, nanosleep, timer_settime) and touches only its thread's state, which
// the signal carries; it takes no lock, so a pause cannot deadlock. A pause that lands inside some library's short
// critical section (V8's task queue, the allocator) delays a thread waiting on it by one pause at most (~0.75 ms at
// the defaults): rare, and pausing only inside MeCab measured no better (BENCHMARKS.md "Writes beside reads"). Linux only; elsewhere pacing reports itself unavailable and sections run unpaced.
#include "threads_addon.h"

#if defined(__linux__)
#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>
#endif

namespace scdv_threads {

#if defined(__linux__)
namespace {

// A real-time signal nobody in this process uses (checked: its handler must be the default when installed).
int PaceSignal() { return SIGRTMIN + 7; }

struct PaceState {
  const std::atomic<int32_t>* busy = nullptr;  // reads in flight (a SharedArrayBuffer's first Int32)
  int64_t sliceNs = 0;  // how often the thread checks its pace
  double share = 1;      // of the wall time, at most, in CPU
  int64_t budgetNs = 0;
  timer_t timer{};
  volatile sig_atomic_t active = 0;  // inside a section
  int64_t sectionStart = 0;
  int64_t sectionCpuStart = 0;
  // Written by the handler (this thread), read by this thread after the section: no other thread touches them.
  volatile uint32_t pauses = 0;
  volatile int64_t pausedNs = 0;
  Napi::Reference<Napi::Int32Array> keep;  // keeps `busy`'s memory alive
};

thread_local PaceState* threadPace = nullptr;

int64_t ClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
int64_t MonotonicNs() { return ClockNs(CLOCK_MONOTONIC); }

timespec ToTimespec(int64_t ns) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(ns / 1000000000);
  ts.tv_nsec = static_cast<long>(ns % 1000000000);
  return ts;
}

void Arm(PaceState* s, int64_t ns) {
  itimerspec it{};
  it.it_value = ToTimespec(ns);
  timer_settime(s->timer, 0, &it, nullptr);
}

void OnPaceTick(int, siginfo_t* info, void*) {
  const int savedErrno = errno;
  auto* s = static_cast<PaceState*>(info->si_value.sival_ptr);
  if (s != nullptr && s->active) {
    const int64_t now = MonotonicNs();
    const int64_t end = s->sectionStart + s->budgetNs;
    if (now < end) {
      if (s->busy->load(std::memory_order_relaxed) > 0) {
        // Sleep until the section's CPU is `share` of its wall time (a wake-up that came late counts as paused),
        // but not past the budget.
        const int64_t cpu = ClockNs(CLOCK_THREAD_CPUTIME_ID) - s->sectionCpuStart;
        const int64_t due = std::min(s->sectionStart + static_cast<int64_t>(static_cast<double>(cpu) / s->share), end);
        if (due > now) {
          timespec left = ToTimespec(due - now);
          while (nanosleep(&left, &left) == -1 && errno == EINTR) {
          }
          s->pauses = s->pauses + 1;
          s->pausedNs = s->pausedNs + (MonotonicNs() - now);
        }
      }
      if (s->active) Arm(s, s->sliceNs);
    }
  }
  errno = savedErrno;
}

// Installs the handler once per process; false when another handler already owns the signal.
bool InstallHandler() {
  static std::once_flag once;
  static bool installed = false;
  std::call_once(once, [] {
    // The handler lives in this shared object: it must never be unloaded (Node closes an addon when the last
    // environment that loaded it ends, a worker thread's included), nor this once-only state reset by a reload.
    Dl_info self{};
    if (dladdr(reinterpret_cast<void*>(&OnPaceTick), &self) == 0 || self.dli_fname == nullptr ||
        dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) == nullptr) {
      return;
    }
    struct sigaction current {};
    if (sigaction(PaceSignal(), nullptr, &current) != 0 || current.sa_handler != SIG_DFL) return;
    struct sigaction action {};
    action.sa_sigaction = OnPaceTick;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    installed = sigaction(PaceSignal(), &action, nullptr) == 0;
  });
  return installed;
}

void DeleteState(void* arg) {
  auto* s = static_cast<PaceState*>(arg);
  s->active = 0;
  timer_delete(s->timer);
  if (threadPace == s) threadPace = nullptr;
  delete s;
}

double NumberField(const Napi::Object& o, const char* key) { return o.Get(key).As<Napi::Number>().DoubleValue(); }

}  // namespace

Napi::Value PaceThisThread(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "paceThisThread(busy, {sliceUs, share, budgetMs}): busy must be an Int32Array on a SharedArrayBuffer";
  if (info.Length() < 2 || !info[0].IsTypedArray() || !info[1].IsObject()) throw Napi::TypeError::New(env, usage);
  auto busy = info[0].As<Napi::TypedArray>();
  if (busy.TypedArrayType() != napi_int32_array || busy.ElementLength() < 1) throw Napi::TypeError::New(env, usage);
  const Napi::Object opts = info[1].As<Napi::Object>();
  const double sliceUs = NumberField(opts, "sliceUs"), share = NumberField(opts, "share"), budgetMs = NumberField(opts, "budgetMs");
  if (!(sliceUs >= 50 && sliceUs <= 1e6) || !(share > 0 && share <= 1) || !(budgetMs >= 0 && budgetMs <= 1e5)) {
    throw Napi::RangeError::New(env, "paceThisThread: sliceUs must be 50-1e6, share above 0 and at most 1, budgetMs 0-1e5");
  }
  if (threadPace != nullptr) throw Napi::Error::New(env, "paceThisThread: this thread is paced already");
  if (!InstallHandler()) return Napi::Boolean::New(env, false);

  auto* s = new PaceState();
  auto typed = busy.As<Napi::Int32Array>();
  s->busy = reinterpret_cast<const std::atomic<int32_t>*>(typed.Data());
  s->keep = Napi::Persistent(typed);
  s->sliceNs = static_cast<int64_t>(sliceUs * 1000);
  s->share = share;
  s->budgetNs = static_cast<int64_t>(budgetMs * 1e6);
  sigevent ev{};
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = PaceSignal();
  ev.sigev_value.sival_ptr = s;
  ev._sigev_un._tid = static_cast<pid_t>(::syscall(SYS_gettid));
  if (timer_create(CLOCK_MONOTONIC, &ev, &s->timer) != 0) {
    delete s;
    return Napi::Boolean::New(env, false);
  }
  threadPace = s;
  // The thread's environment (a worker) ends: the timer and the state go with it.
  napi_add_env_cleanup_hook(env, DeleteState, s);
  return Napi::Boolean::New(env, true);
}

Napi::Value BeginPaced(const Napi::CallbackInfo& info) {
  PaceState* s = threadPace;
  if (s == nullptr) return Napi::Boolean::New(info.Env(), false);
  s->pauses = 0;
  s->pausedNs = 0;
  s->sectionStart = MonotonicNs();
  s->sectionCpuStart = ClockNs(CLOCK_THREAD_CPUTIME_ID);
  s->active = 1;
  if (s->budgetNs > 0) Arm(s, s->sliceNs);
  return Napi::Boolean::New(info.Env(), true);
}

Napi::Value EndPaced(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  PaceState* s = threadPace;
  Napi::Object done = Napi::Object::New(env);
  uint32_t pauses = 0;
  double pausedMs = 0, wallMs = 0, cpuMs = 0;
  if (s != nullptr) {
    s->active = 0;
    Arm(s, 0);  // disarm; a tick already pending finds the section over
    pauses = s->pauses;
    pausedMs = static_cast<double>(s->pausedNs) / 1e6;
    wallMs = static_cast<double>(MonotonicNs() - s->sectionStart) / 1e6;
    cpuMs = static_cast<double>(ClockNs(CLOCK_THREAD_CPUTIME_ID) - s->sectionCpuStart) / 1e6;
  }
  done.Set("pauses", Napi::Number::New(env, pauses));
  done.Set("pausedMs", Napi::Number::New(env, pausedMs));
  done.Set("wallMs", Napi::Number::New(env, wallMs));
  done.Set("cpuMs", Napi::Number::New(env, cpuMs));
  return done;
}

#else

Napi::Value PaceThisThread(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), false); }
Napi::Value BeginPaced(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), false); }
Napi::Value EndPaced(const Napi::CallbackInfo& info) {
  Napi::Object done = Napi::Object::New(info.Env());
  done.Set("pauses", Napi::Number::New(info.Env(), 0));
  done.Set("pausedMs", Napi::Number::New(info.Env(), 0));
  done.Set("wallMs", Napi::Number::New(info.Env(), 0));
  done.Set("cpuMs", Napi::Number::New(info.Env(), 0));
  return done;
}

#endif

}  // namespace scdv_threads
