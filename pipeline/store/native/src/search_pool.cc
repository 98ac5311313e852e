// Helper threads that split one search over idle cores: the pool, parallelFor and the idle-core estimate.
#include "search_internal.h"

#include <condition_variable>
#include <cstdlib>
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
  for (uint32_t i = 1; i < std::min(n, threads); i++) HelperPool::get().post([sh, work] { work(*sh); });
  work(*sh);
  std::unique_lock<std::mutex> l(sh->mu);
  sh->cv.wait(l, [&] { return sh->finished == sh->n; });
  if (sh->err) std::rethrow_exception(sh->err);
}

double idleCores() {
  static std::atomic<int64_t> lastMs{-1000000};  // steady-clock ms of the last read (none yet)
  static std::atomic<double> idle{0.0};
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
  if (now - lastMs.load(std::memory_order_relaxed) >= 250) {
    lastMs.store(now, std::memory_order_relaxed);
    double la[1] = {0.0};
    const double hw = std::max(1u, std::thread::hardware_concurrency());
    idle.store(getloadavg(la, 1) == 1 ? hw - la[0] : 0.0, std::memory_order_relaxed);
  }
  return idle.load(std::memory_order_relaxed);
}

}  // namespace scdv::detail
