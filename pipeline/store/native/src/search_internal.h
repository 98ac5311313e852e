// Internal to the search files (search*.cc): top-N buffers, exact rescoring, per-segment filters, work items, and the
// entry points of block decoding (search_decode.cc), the candidate scan (search_scan.cc) and the thread pool
// (search_pool.cc). Everything called per posting or per document is inline here or stays inside one file.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "search.h"

namespace scdv::detail {

/** A candidate: its accumulator value and local document number (an aggregate: a buffer of them is left unset). */
struct Cand {
  float first;
  uint32_t second;
};

/** A run of candidates in place (what TopN::items() gives). */
struct CandSpan {
  Cand* ptr;
  size_t n;
  Cand* begin() const { return ptr; }
  Cand* end() const { return ptr + n; }
  size_t size() const { return n; }
  Cand& operator[](size_t i) const { return ptr[i]; }
};

/** The order 'fast' rescores its candidates in: accumulator value desc, then local number (a strict total order). */
struct ByAccThenDoc {
  bool operator()(const Cand& a, const Cand& b) const { return a.first > b.first || (a.first == b.first && a.second < b.second); }
};

/**
 * Puts the k best of a[0, n) by ByAccThenDoc in a[0, k), the k-th at a[k - 1] (0 < k <= n; a[k, n) is left
 * undefined). The values are counted in 256 buckets over [min, max] (a bucket's values all exceed a lower one's),
 * the buckets above the k-th's are kept whole and only the k-th's bucket is selected in (nth_element): std::
 * nth_element over all of them mispredicted about every other comparison (6 % of a related search's time). The
 * order is total, so the set selected is the one any selection gives.
 */
void selectBest(Cand* a, size_t n, size_t k);

/**
 * The best N candidates by accumulator value, then local number (ByAccThenDoc: a total order, so the set kept
 * depends neither on the order of the pushes nor on how a cut selects, ties at the N-th value included). Values
 * go into a buffer while they rank above the N-th kept; when the buffer holds 2N, it is cut to the best N
 * (selectBest) and the bar rises to the N-th: O(1) per push amortised. The buffer is allocated whole (2N) up front
 * so that a push is a store and a count (vector::emplace_back's growth check kept it out of line in the scan).
 */
class TopN {
 public:
  explicit TopN(size_t cap) : cap_(cap), v_(new Cand[2 * cap + 1]) {}
  /** Values below this cannot enter; values equal to it only with a local number below thresholdDoc(). */
  float threshold() const { return th_; }
  uint32_t thresholdDoc() const { return thDoc_; }
  /** Whether (s, d) ranks above the N-th kept (always, until the first cut). */
  bool admits(float s, uint32_t d) const { return s > th_ || (s == th_ && d < thDoc_); }
  void push(float s, uint32_t d) {
    if (!admits(s, d)) return;
    v_[n_++] = Cand{s, d};
    if (n_ >= 2 * cap_) cut();
  }
  void finish() {
    if (n_ > cap_) cut();
  }
  /** N: the values kept. */
  size_t cap() const { return cap_; }
  /** After finish(): N values were found. */
  bool full() const { return n_ >= cap_; }
  /** After finish(): the smallest kept value. */
  float min() const {
    float m = INFINITY;
    for (size_t i = 0; i < n_; i++) m = std::min(m, v_[i].first);
    return m;
  }
  /** The values held (after finish(): the best N), in no particular order; the caller may reorder them. */
  CandSpan items() { return {v_.get(), n_}; }
  size_t size() const { return n_; }
 private:
  void cut() {
    selectBest(v_.get(), n_, cap_);
    n_ = cap_;
    th_ = v_[cap_ - 1].first;
    thDoc_ = v_[cap_ - 1].second;
  }
  size_t cap_;
  float th_ = -INFINITY;
  uint32_t thDoc_ = UINT32_MAX;
  std::unique_ptr<Cand[]> v_;
  size_t n_ = 0;
};

/**
 * The elements of [first, last) in the order of cmp, made only as far as they are read: to(m) selects the next
 * best (nth_element) up to m (at least `step` more at a time) and sorts them. cmp must be a strict total order (no
 * two elements equivalent): then the order is unique, and the first m are those of sorting them all, ties between
 * keys included (tests/store/search-order.test.js). For a search that reads a short prefix of a long list.
 */
template <typename T, typename Cmp>
class PrefixOrder {
 public:
  PrefixOrder(T* first, T* last, size_t step, Cmp cmp) : first_(first), n_(size_t(last - first)), step_(step), cmp_(cmp) {}
  void to(size_t m) {
    if (m <= done_) return;
    m = std::min(n_, std::max(m, done_ + step_));
    if (m < n_) std::nth_element(first_ + done_, first_ + m, first_ + n_, cmp_);
    std::sort(first_ + done_, first_ + m, cmp_);
    done_ = m;
  }
 private:
  T* first_;
  size_t n_, step_, done_ = 0;
  Cmp cmp_;
};

inline bool better(const Hit& a, const Hit& b) {
  if (a.score != b.score) return a.score > b.score;
  return a.id < b.id;
}

/** Top-k hits; the heap's front is the worst kept hit. */
class HitHeap {
 public:
  explicit HitHeap(size_t k) : k_(k) { h_.reserve(k); }
  bool wouldTake(double s) const { return h_.size() < k_ || s >= h_.front().score; }
  void push(const Hit& x) {
    if (h_.size() < k_) {
      h_.push_back(x);
      std::push_heap(h_.begin(), h_.end(), better);
    } else if (better(x, h_.front())) {
      std::pop_heap(h_.begin(), h_.end(), better);
      h_.back() = x;
      std::push_heap(h_.begin(), h_.end(), better);
    }
  }
  size_t size() const { return h_.size(); }
  bool full() const { return h_.size() >= k_; }
  double worst() const { return h_.front().score; }
  std::vector<Hit> sorted() {
    std::vector<Hit> out = h_;
    std::sort(out.begin(), out.end(), better);
    return out;
  }
 private:
  size_t k_;
  std::vector<Hit> h_;
};

/** Dot product of a stored document with the dense query: float32 products summed in double (4 lanes). */
template <typename I>
inline double dotDense(const I* ix, const float* v, uint64_t n, const float* qd) {
  double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  uint64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    a0 += double(qd[ix[j]]) * double(v[j]);
    a1 += double(qd[ix[j + 1]]) * double(v[j + 1]);
    a2 += double(qd[ix[j + 2]]) * double(v[j + 2]);
    a3 += double(qd[ix[j + 3]]) * double(v[j + 3]);
  }
  for (; j < n; j++) a0 += double(qd[ix[j]]) * double(v[j]);
  return (a0 + a1) + (a2 + a3);
}

/** A thread's buffer for one decoded document's values (grown to the longest seen). */
struct FwdBuffers {
  std::vector<float> val;
};
inline thread_local FwdBuffers tlsFwd;

/** Same bits as exactScore of the document's stored values given as a MemDoc (dotDense's lanes and order). */
inline double exactScore(const Segment& s, uint32_t d, const float* qd) {
  const uint32_t n = s.fwdCount(d);
  FwdBuffers& b = tlsFwd;
  if (b.val.size() < n) b.val.resize(n);
  return s.dotForward(d, qd, b.val.data());
}

inline double exactScore(const MemDoc& m, const float* qd) { return dotDense(m.idx.data(), m.val.data(), m.idx.size(), qd); }

/** A document rescored: its exact score, local number and (for 'fast''s stop rule) its accumulator value. */
struct Scored { double exact; uint32_t d; float acc = 0.0f; };

using Clock = std::chrono::steady_clock;
inline double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

/**
 * Exact scores of many documents of a segment. Their forward-index entries are scattered over a large
 * mapping, so the documents are taken in local order and the entries of the ones a few steps ahead are
 * prefetched (first their offsets, then their indices and values).
 */
inline void rescoreRange(const Segment& s, Scored* docs, size_t n, const float* qd) {
  std::sort(docs, docs + n, [](const Scored& a, const Scored& b) { return a.d < b.d; });
  constexpr size_t kOff = 8, kData = 4;
  for (size_t i = 0; i < std::min(n, kOff); i++) s.prefetchForwardOffsets(docs[i].d);
  for (size_t i = 0; i < n; i++) {
    if (i + kOff < n) s.prefetchForwardOffsets(docs[i + kOff].d);
    if (i + kData < n) s.prefetchForward(docs[i + kData].d);
    docs[i].exact = exactScore(s, docs[i].d, qd);
  }
}

inline void rescore(const Segment& s, std::vector<Scored>& docs, const float* qd) { rescoreRange(s, docs.data(), docs.size(), qd); }

/** Filters resolved against one segment. */
struct SegFilter {
  const SegView* sv = nullptr;
  uint32_t lo = 0, hi = 0;
  bool siteCheck = false, catCheck = false;
  std::vector<uint8_t> siteOk, catOk;
  std::vector<uint32_t> excl;
  double passShare = 1.0;  // estimated share of the range that passes the site/category filters

  bool passes(uint32_t d) const {
    if (sv->isDeleted(d)) return false;
    if (!sv->hidden.empty() && sv->isHidden(d)) return false;
    if (!excl.empty() && std::binary_search(excl.begin(), excl.end(), d)) return false;
    const Segment& s = *sv->seg;
    if (siteCheck && !siteOk[s.site(d)]) return false;
    if (catCheck && !catOk[s.cat(d)]) return false;
    return true;
  }
};

/** false when no document of the segment can pass. */
bool prepareFilter(const SegView& sv, const Filters& f, SegFilter& sf);

/** Whether a WAL-tail document passes the filters. */
bool memPasses(const MemDoc& m, const Filters& f);

/**
 * Pushes the documents docBase + [lo, hi) whose accumulator acc[lo..hi) beats the heap's minimum and that
 * pass the filters. 16 values at a time are compared with the current threshold (most are below it once
 * the heap is full). zeroAfter: leaves acc[lo..hi) zero.
 */
void scanTopAt(float* acc, uint32_t lo, uint32_t hi, uint32_t docBase, const SegFilter& sf, TopN& top, bool zeroAfter);

/**
 * scanTopAt(..., zeroAfter true) into a TopN that is still empty, pushing a fraction of the documents: a floor is
 * taken from every 32nd document (the value about 2N of the range exceed), documents above it are pushed, and when
 * fewer than N that pass the filters are above it, those at or below it too. The same candidates as scanTopAt
 * (N documents above the floor beat any at or below it); the cost of a full scan is its pushes, ~N(1 + ln(n/2N)).
 */
void scanTopFirstAt(float* acc, uint32_t lo, uint32_t hi, uint32_t docBase, const SegFilter& sf, TopN& top);

inline void scanTop(float* acc, uint32_t lo, uint32_t hi, const SegFilter& sf, TopN& top, bool zeroAfter) {
  scanTopAt(acc, lo, hi, 0, sf, top, zeroAfter);
}

/** A posting list the query touches, with its largest possible contribution (prio). */
struct Item {
  float prio;
  float qv;
  uint32_t list;
  uint32_t dim;
};

/** Cursor over one posting list: its next block. */
struct Cursor {
  const BlockInfo* B;
  uint32_t nb, b;
  const uint8_t* base;
  float sc;
};

/** Cursors of the n lists, each at its first block that reaches lo (lists with nothing in [lo, hi) are left out). */
std::vector<Cursor> cursors(const Segment& s, const Item* items, size_t n, uint32_t lo, uint32_t hi);

/**
 * Adds q_i * value of each posting in window [w0, w0 + kWindowDocs) of every cursor's list to acc[doc - base]
 * (blocks never cross a window), advancing the cursors. Returns postings read.
 */
uint64_t processWindow(const Segment& s, std::vector<Cursor>& cur, uint32_t w0, uint32_t base, float* acc);

/**
 * Every posting of the n lists in [lo, hi) (whole blocks) into the segment-wide acc, window by window so
 * that the part of the accumulator being written stays in cache. Widens [touchedLo, touchedHi).
 */
uint64_t processItems(const Segment& s, const Item* items, size_t n, uint32_t lo, uint32_t hi, float* acc,
                      uint32_t& touchedLo, uint32_t& touchedHi);

/** Searches running in this process (any thread): a search is split over cores only when some are idle. */
extern std::atomic<int> gActiveSearches;

/**
 * Runs fn(0), ..., fn(n - 1), each once, on the calling thread and up to threads - 1 helper threads, and returns
 * when all have run (rethrowing the first exception). Indices are claimed from a shared counter, so the calling
 * thread does all of them itself when the helpers are slow to start (a busy machine): splitting never waits
 * for a thread that is not running. A helper that starts after every index is claimed returns at once.
 */
void parallelFor(uint32_t n, uint32_t threads, const std::function<void(uint32_t)>& fn);

/** 'fast' splits a segment's windows over threads only when it reads at least this many postings. */
constexpr uint64_t kSplitMinPostings = 300000;

/**
 * Cores that neither other processes nor this process's work other than its searches used over the last
 * interval of at least 250 ms (/proc/stat's busy time less this process's search threads' CPU time); without
 * /proc/stat, hardware threads less the 1-minute load average of other work. 0 until a first interval is measured.
 */
double idleCores();

/**
 * Threads for a 'fast' segment search that reads toRead postings, when the caller forces none: 1 below
 * kSplitMinPostings, else 1 plus the idle cores (idleCores, rounded) not taken by this process's searches in flight.
 */
uint32_t autoThreads(uint64_t toRead);

/** The calling thread's CPU time, ns. */
int64_t threadCpuNs();

/** Counts ns of CPU time as this process's searches' (left out of the load idleCores sees). */
void addSearchCpu(int64_t ns);

}  // namespace scdv::detail
