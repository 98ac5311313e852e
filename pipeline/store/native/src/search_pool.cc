// Helper threads that split one search over idle cores: the pool, parallelFor, the idle-core estimate and the
// choice of a search's threads made from it (autoThreads).
#include "search_internal.h"

#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

namespace scdv::detail {

namespace {

/**
 * Helper threads for splitting one search over idle cores: created on first use (at most kMaxHelpers),
 * then waiting for work; never destroyed (they hold nothing between jobs).
 */
class HelperPool {
 public:
  static HelperPool& get() {
    static HelperPool* pool = new HelperPool();
    return *pool;
  }
  void post(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> g(mu_);
      q_.push_back(std::move(fn));
      if (idle_ == 0 && threads_ < kMaxHelpers) {
        threads_++;
        std::thread([this] { loop(); }).detach();
      }
    }
    cv_.notify_one();
  }
 private:
  static constexpr int kMaxHelpers = 8;
  void loop() {
    for (;;) {
      std::function<void()> f;
      {
        std::unique_lock<std::mutex> l(mu_);
        idle_++;
        cv_.wait(l, [&] { return !q_.empty(); });
        idle_--;
        f = std::move(q_.front());
        q_.pop_front();
      }
      f();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> q_;
  int idle_ = 0, threads_ = 0;
};

}  // namespace

std::atomic<int> gActiveSearches{0};

void parallelFor(uint32_t n, uint32_t threads, const std::function<void(uint32_t)>& fn) {
  if (n <= 1 || threads <= 1) {
    for (uint32_t i = 0; i < n; i++) fn(i);
    return;
  }
  struct Shared {
    std::atomic<uint32_t> next{0};
    std::mutex mu;
    std::condition_variable cv;
    uint32_t n = 0, finished = 0;
    std::exception_ptr err;
    const std::function<void(uint32_t)>* fn = nullptr;  // used only by a thread that claimed an index
  };
  auto sh = std::make_shared<Shared>();
  sh->n = n;
  sh->fn = &fn;
  auto work = [](Shared& S) {
    for (;;) {
      const uint32_t i = S.next.fetch_add(1);
      if (i >= S.n) return;
      std::exception_ptr e;
      try {
        (*S.fn)(i);
      } catch (...) {
        e = std::current_exception();
      }
      std::lock_guard<std::mutex> g(S.mu);
      if (e && !S.err) S.err = e;
      if (++S.finished == S.n) S.cv.notify_all();
    }
  };
  for (uint32_t i = 1; i < std::min(n, threads); i++) {
    HelperPool::get().post([sh, work] {
      const int64_t t0 = threadCpuNs();
      work(*sh);
      addSearchCpu(threadCpuNs() - t0);
    });
  }
  work(*sh);
  std::unique_lock<std::mutex> l(sh->mu);
  sh->cv.wait(l, [&] { return sh->finished == sh->n; });
  if (sh->err) std::rethrow_exception(sh->err);
}

/** Test override of the idle-core estimate (NaN: measure): setIdleCores. */
std::atomic<double> gIdleOverride{NAN};

namespace {

/** CPU time of this process's searches, ns: the calling threads' (search()) and the helpers' parts. */
std::atomic<int64_t> gSearchCpuNs{0};

/** The machine's busy and total CPU time from /proc/stat's first line (any unit); false when unreadable. */
bool machineCpu(double& busy, double& total) {
  std::FILE* f = std::fopen("/proc/stat", "r");
  if (!f) return false;
  unsigned long long v[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // user nice system idle iowait irq softirq steal
  const int got = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
  std::fclose(f);
  if (got < 4) return false;
  busy = double(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
  total = busy + double(v[3] + v[4]);
  return true;
}

int64_t steadyNs() { return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count(); }

}  // namespace

int64_t threadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void addSearchCpu(int64_t ns) { gSearchCpuNs.fetch_add(ns, std::memory_order_relaxed); }

double idleCores() {
  const double forced = gIdleOverride.load(std::memory_order_relaxed);
  if (!std::isnan(forced)) return forced;
  static std::mutex mu;
  static int64_t lastNs = INT64_MIN, lastSearchNs = 0;
  static double lastBusy = 0, lastTotal = 0;
  static std::atomic<double> idle{-1.0};  // < 0: no interval measured yet
  const double hw = std::max(1u, std::thread::hardware_concurrency());
  const int64_t now = steadyNs();
  std::unique_lock<std::mutex> l(mu, std::try_to_lock);  // one thread samples; the others use the last estimate
  if (l.owns_lock() && now - lastNs >= 250000000) {
    double busy = 0, total = 0;
    const int64_t searchNs = gSearchCpuNs.load(std::memory_order_relaxed);
    if (machineCpu(busy, total)) {
      // Over the last interval: the cores busy with anything but this process's searches. A search's own
      // threads are left out (the load average counted them, so splitting made the next searches stop splitting).
      if (lastNs != INT64_MIN && total > lastTotal) {
        const double busyCores = hw * (busy - lastBusy) / (total - lastTotal);
        const double searchCores = double(searchNs - lastSearchNs) / double(now - lastNs);
        idle.store(hw - std::max(0.0, busyCores - searchCores), std::memory_order_relaxed);
      }
      lastBusy = busy;
      lastTotal = total;
    } else {
      // No /proc/stat (not Linux): the 1-minute load average, this process's running searches taken out.
      double la[1] = {0.0};
      const double active = gActiveSearches.load(std::memory_order_relaxed);
      idle.store(getloadavg(la, 1) == 1 ? hw - std::max(0.0, la[0] - active) : 0.0, std::memory_order_relaxed);
    }
    lastNs = now;
    lastSearchNs = searchNs;
  }
  return std::max(0.0, idle.load(std::memory_order_relaxed));
}

uint32_t autoThreads(uint64_t toRead) {
  if (toRead < kSplitMinPostings) return 1;
  // Helpers only for cores that neither other processes nor this process's other searches in flight use: a
  // search on a busy machine stays on its thread (a helper that waits for a core makes the split 1.3-3x slower
  // than one thread: BENCHMARKS.md "Search threads").
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int notOthers = std::min(hw, static_cast<int>(std::floor(idleCores() + 0.5)));
  return static_cast<uint32_t>(1 + std::max(0, notOthers - gActiveSearches.load(std::memory_order_relaxed)));
}

}  // namespace scdv::detail

namespace scdv {

void setIdleCores(double cores) { detail::gIdleOverride.store(cores >= 0 ? cores : NAN, std::memory_order_relaxed); }
double idleCoresEstimate() { return detail::idleCores(); }

}  // namespace scdv
