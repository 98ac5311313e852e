// Per-segment search (see pipeline/store/README.md, "How a search runs"):
//
//  1. Work items are the posting lists (dim, tier) of the query's dims, ordered by their largest possible
//     contribution |q_i| * max|value in list|.
//  2. Term-at-a-time, one window of kWindowDocs documents at a time: each list's blocks (int8 weights,
//     byte-aligned doc gaps, decoded with SSE4.1) are added into a float accumulator. 'exact' reads every
//     list (with a score-bound early exit that rarely fires on dense signed queries); 'fast' stops after
//     `budget` of the query's postings, the largest contributions first, and keeps a window-sized accumulator.
//  3. Candidates are the best accumulator values among documents passing the filters (deleted, hidden,
//     excluded ids, sites, categories; the time range is a range of local numbers).
//  4. Candidates are rescored exactly from the forward index (double accumulation of f32 products).
//  5. 'exact' then proves the result: every accumulator value is within E of the true score, where
//     E = sum_i |q_i| * (largest list scale of dim i) / 2 (+ float slack). With theta the k-th exact score
//     found, any document that could beat it has acc >= theta - E; those are all rescored too.
#include "search.h"

#include <algorithm>
#include <array>
#include <utility>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace scdv {

bool SegView::isHidden(uint32_t d) const { return std::binary_search(hidden.begin(), hidden.end(), d); }

namespace {

struct Scratch {
  std::vector<float> acc;   // 'exact': one float per document of the largest segment searched
  std::vector<float> wacc;  // 'fast': one window of kWindowDocs floats
  std::vector<float> qd;    // the query, dense
};
thread_local Scratch tls;

/**
 * Top-N by accumulator value. Values go into a buffer while they beat the threshold; when the buffer holds
 * 2N, it is cut to the best N (nth_element) and the threshold rises to the N-th value: O(1) per push
 * amortised. finish() leaves exactly the best N (ties: any of them).
 */
class TopN {
 public:
  explicit TopN(size_t cap) : cap_(cap) { v_.reserve(2 * cap + 1); }
  /** Values at or below this cannot enter. */
  float threshold() const { return th_; }
  void push(float s, uint32_t d) {
    if (s <= th_) return;
    v_.emplace_back(s, d);
    if (v_.size() >= 2 * cap_) cut();
  }
  void finish() {
    if (v_.size() > cap_) cut();
  }
  /** After finish(): N values were found. */
  bool full() const { return v_.size() >= cap_; }
  /** After finish(): the smallest kept value. */
  float min() const {
    float m = INFINITY;
    for (auto& x : v_) m = std::min(m, x.first);
    return m;
  }
  std::vector<std::pair<float, uint32_t>>& items() { return v_; }
  size_t size() const { return v_.size(); }
 private:
  void cut() {
    std::nth_element(v_.begin(), v_.begin() + (cap_ - 1), v_.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    v_.resize(cap_);
    float m = INFINITY;
    for (auto& x : v_) m = std::min(m, x.first);
    th_ = m;
  }
  size_t cap_;
  float th_ = -INFINITY;
  std::vector<std::pair<float, uint32_t>> v_;
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

inline double exactScore(const Segment& s, uint32_t d, const float* qd) {
  const uint64_t b = s.fwdBegin(d), e = s.fwdEnd(d);
  if (const uint16_t* ix = s.idx16()) return dotDense(ix + b, s.fwdVal() + b, e - b, qd);
  return dotDense(s.idx32() + b, s.fwdVal() + b, e - b, qd);
}

inline double exactScore(const MemDoc& m, const float* qd) { return dotDense(m.idx.data(), m.val.data(), m.idx.size(), qd); }

struct Scored { double exact; uint32_t d; };

using Clock = std::chrono::steady_clock;
inline double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

inline void prefetchRange(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(c + o);
}

/**
 * Exact scores of many documents of a segment. Their forward-index entries are scattered over a large
 * mapping, so the documents are taken in local order and the entries of the ones a few steps ahead are
 * prefetched (first their offsets, then their indices and values).
 */
void rescoreRange(const Segment& s, Scored* docs, size_t n, const float* qd) {
  std::sort(docs, docs + n, [](const Scored& a, const Scored& b) { return a.d < b.d; });
  const size_t ib = s.h().idxBytes;
  constexpr size_t kOff = 8, kData = 4;
  for (size_t i = 0; i < std::min(n, kOff); i++) __builtin_prefetch(&s.fwdOffsets()[docs[i].d]);
  for (size_t i = 0; i < n; i++) {
    if (i + kOff < n) __builtin_prefetch(&s.fwdOffsets()[docs[i + kOff].d]);
    if (i + kData < n) {
      const uint32_t d = docs[i + kData].d;
      const uint64_t b = s.fwdBegin(d), e = s.fwdEnd(d);
      prefetchRange(reinterpret_cast<const char*>(s.idx16() ? static_cast<const void*>(s.idx16()) : static_cast<const void*>(s.idx32())) + b * ib, (e - b) * ib);
      prefetchRange(s.fwdVal() + b, (e - b) * 4);
    }
    docs[i].exact = exactScore(s, docs[i].d, qd);
  }
}

void rescore(const Segment& s, std::vector<Scored>& docs, const float* qd) { rescoreRange(s, docs.data(), docs.size(), qd); }

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
bool prepareFilter(const SegView& sv, const Filters& f, SegFilter& sf) {
  const Segment& s = *sv.seg;
  sf.sv = &sv;
  const uint32_t n = s.ndocs();
  sf.lo = 0;
  sf.hi = n;
  if (f.hasSince || f.hasUntil) {
    // Documents without a time never match a time filter: they sort first (kNoTime).
    sf.lo = s.upperTime(kNoTime);
    if (f.hasSince) sf.lo = std::max(sf.lo, s.lowerTime(f.since));
    if (f.hasUntil) sf.hi = s.upperTime(f.until);
  }
  if (sf.lo >= sf.hi) return false;
  const uint32_t ns = s.h().nsites, nc = s.h().ncats;
  if (f.hasSites || !f.excludeSites.empty()) {
    sf.siteOk.assign(size_t(ns) + 1, f.hasSites ? 0 : 1);
    uint64_t pass = 0;
    if (f.hasSites) {
      for (const auto& name : f.sites) {
        uint32_t c = s.siteCode(name);
        if (c && !sf.siteOk[c]) { sf.siteOk[c] = 1; pass += s.siteCount(c); }
      }
    } else {
      pass = n;
    }
    bool any = f.hasSites;
    for (const auto& name : f.excludeSites) {
      uint32_t c = s.siteCode(name);
      if (c && sf.siteOk[c]) { sf.siteOk[c] = 0; pass -= s.siteCount(c); any = true; }
    }
    sf.siteCheck = any;
    if (pass == 0) return false;
    sf.passShare *= double(pass) / double(n);
  }
  if (f.hasCategories) {
    sf.catOk.assign(size_t(nc) + 1, 0);
    uint64_t pass = 0;
    for (const auto& name : f.categories) {
      uint32_t c = s.catCode(name);
      if (c && !sf.catOk[c]) { sf.catOk[c] = 1; pass += s.catCount(c); }
    }
    if (pass == 0) return false;
    sf.catCheck = true;
    sf.passShare *= double(pass) / double(n);
  }
  for (const auto& id : f.excludeIds) {
    int64_t d = s.lookup(id);
    if (d >= 0) sf.excl.push_back(static_cast<uint32_t>(d));
  }
  std::sort(sf.excl.begin(), sf.excl.end());
  return true;
}

/**
 * Pushes the documents docBase + [lo, hi) whose accumulator acc[lo..hi) beats the heap's minimum and that
 * pass the filters. 16 values at a time are compared with the current threshold (most are below it once
 * the heap is full). zeroAfter: leaves acc[lo..hi) zero.
 */
void scanTopAt(float* acc, uint32_t lo, uint32_t hi, uint32_t docBase, const SegFilter& sf, TopN& top, bool zeroAfter) {
  uint32_t d = lo;
#if defined(__SSE2__)
  alignas(16) float tmp[16];
  const __m128 z = _mm_setzero_ps();
  for (; d + 16 <= hi; d += 16) {
    const float t = top.threshold();
    const __m128 th = _mm_set1_ps(t);
    const __m128 a0 = _mm_loadu_ps(acc + d), a1 = _mm_loadu_ps(acc + d + 4);
    const __m128 a2 = _mm_loadu_ps(acc + d + 8), a3 = _mm_loadu_ps(acc + d + 12);
    unsigned m = unsigned(_mm_movemask_ps(_mm_cmpgt_ps(a0, th))) | (unsigned(_mm_movemask_ps(_mm_cmpgt_ps(a1, th))) << 4) |
                 (unsigned(_mm_movemask_ps(_mm_cmpgt_ps(a2, th))) << 8) | (unsigned(_mm_movemask_ps(_mm_cmpgt_ps(a3, th))) << 12);
    if (zeroAfter) {
      _mm_storeu_ps(acc + d, z); _mm_storeu_ps(acc + d + 4, z);
      _mm_storeu_ps(acc + d + 8, z); _mm_storeu_ps(acc + d + 12, z);
    }
    if (!m) continue;
    _mm_store_ps(tmp, a0); _mm_store_ps(tmp + 4, a1); _mm_store_ps(tmp + 8, a2); _mm_store_ps(tmp + 12, a3);
    while (m) {
      const int i = __builtin_ctz(m);
      m &= m - 1;
      const float a = tmp[i];
      if (a <= top.threshold()) continue;
      if (!sf.passes(docBase + d + i)) continue;
      top.push(a, docBase + d + i);
    }
  }
#endif
  for (; d < hi; d++) {
    const float a = acc[d];
    if (zeroAfter) acc[d] = 0.0f;
    if (a <= top.threshold()) continue;
    if (!sf.passes(docBase + d)) continue;
    top.push(a, docBase + d);
  }
}

void scanTop(float* acc, uint32_t lo, uint32_t hi, const SegFilter& sf, TopN& top, bool zeroAfter) {
  scanTopAt(acc, lo, hi, 0, sf, top, zeroAfter);
}

struct Item {
  float prio;
  float qv;
  uint32_t list;
  uint32_t dim;
};

constexpr size_t kMaxSurvivors = 50000;

/**
 * Bounds of what the unread lists can add, for 'exact' early termination. A document has at most one
 * posting per dim (in one of its tiers), so dim i can still add a value in [rMinus_i, rPlus_i]: the
 * extremes of q_i * value over the dim's unread lists (and 0).
 */
struct ExactBounds {
  struct Dim { uint32_t first, end; float qv; double rp, rm; };
  std::vector<Dim> dims;                       // by position in the sorted query dims touched
  std::vector<uint8_t> done;                   // per list of the segment touched by the query: read
  std::unordered_map<uint32_t, uint32_t> pos;  // dim -> index in dims
  double ubRest = 0, lbRest = 0, ubDone = 0;

  static void bounds(const ListInfo& L, float qv, double& hi, double& lo) {
    const double a = double(qv) * L.maxv, b = double(qv) * L.minv;
    hi = std::max({0.0, a, b});
    lo = std::min({0.0, a, b});
  }
  void init(const Segment& s, const std::vector<Item>& items) {
    done.assign(s.h().nlists, 0);
    for (const Item& it : items) {
      if (pos.count(it.dim)) continue;
      Dim d{s.listBegin(it.dim), s.listEnd(it.dim), it.qv, 0, 0};
      for (uint32_t l = d.first; l < d.end; l++) {
        double h, lo;
        bounds(s.list(l), it.qv, h, lo);
        d.rp = std::max(d.rp, h);
        d.rm = std::min(d.rm, lo);
      }
      ubRest += d.rp;
      lbRest += d.rm;
      pos[it.dim] = static_cast<uint32_t>(dims.size());
      dims.push_back(d);
    }
  }
  /** Marks a list read. */
  void markRead(const Segment& s, const Item& it) {
    Dim& d = dims[pos[it.dim]];
    done[it.list] = 1;
    double h, lo;
    bounds(s.list(it.list), it.qv, h, lo);
    ubDone += h;
    double rp = 0, rm = 0;
    for (uint32_t l = d.first; l < d.end; l++) {
      if (done[l]) continue;
      bounds(s.list(l), d.qv, h, lo);
      rp = std::max(rp, h);
      rm = std::min(rm, lo);
    }
    ubRest += rp - d.rp;
    lbRest += rm - d.rm;
    d.rp = rp;
    d.rm = rm;
  }
  /** theta_lb <= (largest accumulator) + lbRest <= ubDone + lbRest: no use scanning when ubRest exceeds it. */
  bool worthChecking() const { return ubRest < ubDone + lbRest; }
};

/**
 * Decodes one block (cnt postings from doc `first`; int8 weights w, then the gaps g) into docs[] and
 * vals[] = sc * weight. Returns false when the block does not decode to its `last` doc (damaged data):
 * nothing has been written to the accumulator then.
 */
template <int B>
bool decodeBlock(const int8_t* w, const uint8_t* g, uint32_t cnt, uint32_t first, uint32_t last, float sc,
                 uint32_t* docs, float* vals) {
#if defined(__SSE4_1__)
  const __m128 scv = _mm_set1_ps(sc);
  for (uint32_t j = 0; j < cnt; j += 4) {
    int32_t w4;
    std::memcpy(&w4, w + j, 4);
    _mm_store_ps(vals + j, _mm_mul_ps(_mm_cvtepi32_ps(_mm_cvtepi8_epi32(_mm_cvtsi32_si128(w4))), scv));
  }
  docs[0] = first;
  if constexpr (B == 0) {
    const __m128i step = _mm_set1_epi32(4);
    __m128i d = _mm_add_epi32(_mm_set1_epi32(int(first)), _mm_setr_epi32(1, 2, 3, 4));
    for (uint32_t j = 1; j < cnt; j += 4) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(docs + j), d);
      d = _mm_add_epi32(d, step);
    }
    return first + (cnt - 1) == last;
  } else if constexpr (B == 8 || B == 16) {
    // Prefix sums of (gap + 1), 4 lanes at a time, carried from lane to lane.
    const __m128i one = _mm_set1_epi32(1);
    __m128i carry = _mm_set1_epi32(int(first));
    const uint32_t n = cnt - 1;
    for (uint32_t j = 0; j < n; j += 4) {
      __m128i x;
      if constexpr (B == 8) {
        int32_t g4;
        std::memcpy(&g4, g + j, 4);
        x = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(g4));
      } else {
        int64_t g4;
        std::memcpy(&g4, g + 2 * j, 8);
        x = _mm_cvtepu16_epi32(_mm_cvtsi64_si128(g4));
      }
      x = _mm_add_epi32(x, one);
      x = _mm_add_epi32(x, _mm_slli_si128(x, 4));
      x = _mm_add_epi32(x, _mm_slli_si128(x, 8));
      x = _mm_add_epi32(x, carry);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(docs + 1 + j), x);
      carry = _mm_shuffle_epi32(x, 0xff);
    }
    // Gaps past the block's end read zero padding or the next block: only docs[0..cnt) count. Sums cannot
    // wrap (at most 127 gaps below 2^16 from a doc below 2^32 - 2^23, checked by the caller).
    return docs[cnt - 1] == last;
  } else {
#endif
    uint64_t doc = first;
    docs[0] = first;
    vals[0] = sc * float(w[0]);
    for (uint32_t j = 1; j < cnt; j++) {
      uint32_t gap;
      if constexpr (B == 0) gap = 0;
      else if constexpr (B == 8) gap = g[j - 1];
      else if constexpr (B == 16) { uint16_t v; std::memcpy(&v, g + 2 * (j - 1), 2); gap = v; }
      else std::memcpy(&gap, g + 4 * (j - 1), 4);
      doc += uint64_t(gap) + 1;
      if (doc > last) return false;
      docs[j] = static_cast<uint32_t>(doc);
      vals[j] = sc * float(w[j]);
    }
    return doc == last;
#if defined(__SSE4_1__)
  }
#endif
}

/** acc[docs[j]] += vals[j] for one block. */
inline void scatter(const uint32_t* docs, const float* vals, uint32_t cnt, float* acc) {
  uint32_t j = 0;
  for (; j + 4 <= cnt; j += 4) {
    acc[docs[j]] += vals[j];
    acc[docs[j + 1]] += vals[j + 1];
    acc[docs[j + 2]] += vals[j + 2];
    acc[docs[j + 3]] += vals[j + 3];
  }
  for (; j < cnt; j++) acc[docs[j]] += vals[j];
}

/** Cursor over one posting list: its next block. */
struct Cursor {
  const BlockInfo* B;
  uint32_t nb, b;
  const uint8_t* base;
  float sc;
};

/** Cursors of the n lists, each at its first block that reaches lo (lists with nothing in [lo, hi) are left out). */
std::vector<Cursor> cursors(const Segment& s, const Item* items, size_t n, uint32_t lo, uint32_t hi) {
  std::vector<Cursor> cur;
  cur.reserve(n);
  for (size_t i = 0; i < n; i++) {
    const ListInfo& L = s.list(items[i].list);
    const BlockInfo* B = s.blocks() + L.block0;
    uint32_t a = 0, z = L.nblocks;
    while (a < z) {
      uint32_t m = (a + z) / 2;
      if (B[m].last < lo) a = m + 1; else z = m;
    }
    if (a >= L.nblocks || B[a].first >= hi) continue;
    cur.push_back({B, L.nblocks, a, s.pdata() + L.dataOff, items[i].qv * L.scale});
  }
  return cur;
}

/**
 * Adds q_i * value of each posting in window [w0, w0 + kWindowDocs) of every cursor's list to acc[doc - base]
 * (blocks never cross a window), advancing the cursors. Returns postings read.
 */
uint64_t processWindow(const Segment& s, std::vector<Cursor>& cur, uint32_t w0, uint32_t base, float* acc) {
  const uint64_t w1 = uint64_t(w0) + kWindowDocs;
  alignas(16) uint32_t docs[kBlockSize + 8];
  alignas(16) float vals[kBlockSize + 8];
  uint64_t read = 0;
  for (Cursor& c : cur) {
    for (; c.b < c.nb; c.b++) {
      const BlockInfo& bk = c.B[c.b];
      if (bk.first >= w1) break;
      const uint32_t cnt = uint32_t(bk.cntm1) + 1;
      const uint8_t* data = c.base + bk.dataRel;
      const int8_t* w = reinterpret_cast<const int8_t*>(data);
      const uint32_t first = bk.first - base, last = bk.last - base;
      bool ok;
      switch (bk.bits) {
        case 0: ok = decodeBlock<0>(w, data + cnt, cnt, first, last, c.sc, docs, vals); break;
        case 8: ok = decodeBlock<8>(w, data + cnt, cnt, first, last, c.sc, docs, vals); break;
        case 16: ok = first < UINT32_MAX - (1u << 23) && decodeBlock<16>(w, data + cnt, cnt, first, last, c.sc, docs, vals); break;
        default: ok = decodeBlock<32>(w, data + cnt, cnt, first, last, c.sc, docs, vals); break;
      }
      if (!ok) throw StoreError("segment " + s.path() + " is damaged: posting block does not decode", "CORRUPT");
      scatter(docs, vals, cnt, acc);
      read += cnt;
    }
  }
  return read;
}

/**
 * Every posting of the n lists in [lo, hi) (whole blocks) into the segment-wide acc, window by window so
 * that the part of the accumulator being written stays in cache. Widens [touchedLo, touchedHi).
 */
uint64_t processItems(const Segment& s, const Item* items, size_t n, uint32_t lo, uint32_t hi, float* acc,
                      uint32_t& touchedLo, uint32_t& touchedHi) {
  std::vector<Cursor> cur = cursors(s, items, n, lo, hi);
  if (cur.empty()) return 0;
  uint64_t read = 0;
  const uint32_t start = lo - lo % kWindowDocs;
  touchedLo = std::min(touchedLo, start);
  for (uint64_t w0 = start; w0 < hi; w0 += kWindowDocs) {
    read += processWindow(s, cur, static_cast<uint32_t>(w0), 0, acc);
    touchedHi = std::max<uint32_t>(touchedHi, static_cast<uint32_t>(std::min<uint64_t>(w0 + kWindowDocs, s.ndocs())));
  }
  return read;
}

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

/** Searches running in this process (any thread): a search is split over cores only when some are idle. */
std::atomic<int> gActiveSearches{0};

/**
 * Runs fn(0), ..., fn(n - 1), each once, on the calling thread and up to threads - 1 helper threads, and returns
 * when all have run (rethrowing the first exception). Indices are claimed from a shared counter, so the calling
 * thread does all of them itself when the helpers are slow to start (a busy machine): splitting never waits
 * for a thread that is not running. A helper that starts after every index is claimed returns at once.
 */
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

/**
 * Cores that look idle: hardware threads minus the 1-minute load average of the machine (other processes'
 * work, and this one's), read at most every 250 ms.
 */
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

/** 'fast' splits a segment's windows over threads only when it reads at least this many postings. */
constexpr uint64_t kSplitMinPostings = 300000;

/**
 * 'fast': the lists up to the budget are read one window of kWindowDocs documents at a time into a
 * window-sized accumulator (it stays in the L2 cache), which is scanned for candidates and cleared before
 * the next window; the best `candidates` documents are then rescored exactly.
 *
 * Windows are independent, so a large segment's windows are split into runs (parallelFor: the caller's
 * thread and helpers), each with its own accumulator and candidates, when cores are idle: with
 * p.threads == 0, one helper per core that neither this process's other searches in flight nor the machine's
 * load average account for (none on a busy machine); p.threads > 0 sets the number of threads.
 */
void searchFast(const Segment& s, const SegFilter& sf, const std::vector<Item>& items, uint64_t budget, const float* qd,
                const SearchParams& p, HitHeap& out, SearchStats* stats) {
  size_t nsel = 0;
  uint64_t toRead = 0;
  for (; nsel < items.size() && toRead < budget; nsel++) toRead += s.list(items[nsel].list).count;
  const uint32_t lo = sf.lo, hi = sf.hi, n = s.ndocs();
  // Candidates: the segment's share of the budget (by its documents), and never fewer than 3k.
  const size_t R = std::max<size_t>(size_t(3) * p.k, static_cast<size_t>(std::ceil(double(p.candidates) * p.segShare)));
  const uint64_t wStart = lo - lo % kWindowDocs;
  const uint32_t nwin = static_cast<uint32_t>((uint64_t(hi) - wStart + kWindowDocs - 1) / kWindowDocs);
  uint32_t ways = 1;
  if (p.threads > 0) {
    ways = p.threads;
  } else if (toRead >= kSplitMinPostings) {
    // Helpers only for cores that are idle: not used by this process's other searches, nor (by the load
    // average) by other processes. On a busy machine a search stays on its thread.
    const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int free = std::min(hw - gActiveSearches.load(std::memory_order_relaxed), static_cast<int>(std::floor(idleCores() + 0.5)));
    ways = static_cast<uint32_t>(1 + std::max(0, free));
  }
  ways = std::max<uint32_t>(1, std::min<uint32_t>({ways, nwin, 8}));
  // Work units: runs of windows, several per thread, claimed one at a time, so that a helper that starts late
  // (or is descheduled) holds back at most one unit while the other threads take the rest.
  const uint32_t nunits = ways == 1 ? 1 : std::min<uint32_t>(nwin, 4 * ways);

  struct Part {
    uint64_t w0 = 0, w1 = 0;  // windows [w0, w1)
    std::unique_ptr<TopN> top;
    uint64_t read = 0;
    double taatMs = 0, scanMs = 0;
  };
  std::vector<Part> parts(nunits);
  for (uint32_t i = 0; i < nunits; i++) {
    parts[i].w0 = wStart + uint64_t(nwin) * i / nunits * kWindowDocs;
    parts[i].w1 = std::min<uint64_t>(hi, wStart + uint64_t(nwin) * (i + 1) / nunits * kWindowDocs);
    parts[i].top = std::make_unique<TopN>(R);
  }
  auto runPart = [&](Part& pt) {
    auto& wv = tls.wacc;
    if (wv.size() < kWindowDocs) wv.assign(kWindowDocs, 0.0f);  // invariant: all zero between searches
    float* acc = wv.data();
    const uint32_t plo = static_cast<uint32_t>(std::max<uint64_t>(lo, pt.w0));
    std::vector<Cursor> cur = cursors(s, items.data(), nsel, plo, static_cast<uint32_t>(pt.w1));
    try {
      for (uint64_t w0 = pt.w0; w0 < pt.w1; w0 += kWindowDocs) {
        const uint32_t base = static_cast<uint32_t>(w0);
        auto t0 = Clock::now();
        pt.read += processWindow(s, cur, base, base, acc);
        auto t1 = Clock::now();
        const uint32_t a = std::max<uint32_t>(lo, base) - base;
        const uint32_t b = static_cast<uint32_t>(std::min<uint64_t>(hi, w0 + kWindowDocs) - w0);
        const uint32_t end = static_cast<uint32_t>(std::min<uint64_t>(n, w0 + kWindowDocs) - w0);
        scanTopAt(acc, a, b, base, sf, *pt.top, true);
        if (a > 0) std::memset(acc, 0, sizeof(float) * a);
        if (b < end) std::memset(acc + b, 0, sizeof(float) * (end - b));
        if (stats) {
          pt.taatMs += std::chrono::duration<double, std::milli>(t1 - t0).count();
          pt.scanMs += msSince(t1);
        }
      }
    } catch (...) {
      std::memset(acc, 0, sizeof(float) * kWindowDocs);
      throw;
    }
  };
  parallelFor(nunits, ways, [&](uint32_t i) { runPart(parts[i]); });
  TopN& top = *parts[0].top;
  uint64_t read = parts[0].read;
  double taatMs = parts[0].taatMs, scanMs = parts[0].scanMs;
  for (uint32_t i = 1; i < nunits; i++) {
    for (auto& c : parts[i].top->items()) top.push(c.first, c.second);
    read += parts[i].read;
    taatMs += parts[i].taatMs;
    scanMs += parts[i].scanMs;
  }
  top.finish();
  std::vector<Scored> scored;
  scored.reserve(top.size());
  for (auto& c : top.items()) scored.push_back({0.0, c.second});
  auto t0 = Clock::now();
  if (ways > 1 && scored.size() >= 512) {
    // The same threads rescore contiguous runs of the candidates in local order.
    std::sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) { return a.d < b.d; });
    const size_t m = scored.size();
    parallelFor(2 * ways, ways, [&](uint32_t i) {
      const size_t a = m * i / (2 * ways), b = m * (i + 1) / (2 * ways);
      rescoreRange(s, scored.data() + a, b - a, qd);
    });
  } else {
    rescore(s, scored, qd);
  }
  if (stats) {
    stats->postings += read;
    stats->rescored += scored.size();
    stats->taatMs += taatMs;
    stats->scanMs += scanMs;
    stats->rescoreMs += msSince(t0);
    stats->threads = std::max<uint32_t>(stats->threads, ways);
  }
  for (auto& x : scored) {
    if (out.wouldTake(x.exact)) out.push({x.exact, s.id(x.d), s.meta(x.d)});
  }
}

void searchSegment(const SegView& sv, const SegFilter& sf, const uint32_t* qidx, const float* qval, uint32_t qn,
                   const float* qd, const SearchParams& p, HitHeap& out, SearchStats* stats) {
  const Segment& s = *sv.seg;
  const uint32_t n = s.ndocs();
  const uint32_t lo = sf.lo, hi = sf.hi;
  const double rangeShare = double(hi - lo) / double(n);

  // Work items and cost estimate.
  std::vector<Item> items;
  items.reserve(size_t(qn) * 4);
  uint64_t total = 0;
  double errBound = 0, slack = 0;
  for (uint32_t j = 0; j < qn; j++) {
    const uint32_t dim = qidx[j];
    const float qv = qval[j];
    if (qv == 0.0f) continue;
    float maxScale = 0, maxAbs = 0;
    for (uint32_t l = s.listBegin(dim); l < s.listEnd(dim); l++) {
      const ListInfo& L = s.list(l);
      float m = std::max(std::fabs(L.maxv), std::fabs(L.minv));
      items.push_back({std::fabs(qv) * m, qv, l, dim});
      total += L.count;
      maxScale = std::max(maxScale, L.scale);
      maxAbs = std::max(maxAbs, m);
    }
    errBound += std::fabs(double(qv)) * double(maxScale) * 0.5;
    slack += std::fabs(double(qv)) * double(maxAbs);
  }
  // Relative error of the int8 rounding in float, plus float accumulation over at most qn terms.
  errBound = errBound * (1 + 1e-5) + slack * 1.2e-7 * (qn + 4) + 1e-12;
  if (stats) stats->postingsTotal += total;

  const double avgNnz = n ? double(s.nnz()) / n : 0;
  const double bruteCost = double(hi - lo) * (1.0 + sf.passShare * avgNnz);
  const double taatShare = p.exact ? 1.0 : std::min(1.0, std::max(p.budget, total ? double(p.minPostings) / double(total) : 1.0));
  const double taatCost = double(total) * rangeShare * taatShare + double(hi - lo) + 2.0 * p.candidates * avgNnz;
  if (bruteCost < 0.5 * taatCost) {
    // Few documents pass the filters: score them all exactly.
    if (stats) stats->bruteSegments++;
    for (uint32_t d = lo; d < hi; d++) {
      if (!sf.passes(d)) continue;
      double sc = exactScore(s, d, qd);
      if (stats) stats->rescored++;
      if (out.wouldTake(sc)) out.push({sc, s.id(d), s.meta(d)});
    }
    return;
  }

  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.prio > b.prio; });
  const uint64_t budget = p.exact ? UINT64_MAX : std::max<uint64_t>(p.minPostings, static_cast<uint64_t>(std::ceil(p.budget * double(total))));
  if (!p.exact) {
    searchFast(s, sf, items, budget, qd, p, out, stats);
    return;
  }
  auto& accv = tls.acc;
  if (accv.size() < n) accv.resize(n, 0.0f);  // invariant: all zero between searches
  float* acc = accv.data();
  // Leaves the accumulator zero again, however this function exits.
  struct Zero {
    float* acc; uint32_t lo, hi;        // range written by the postings
    uint32_t doneLo = 0, doneHi = 0;    // range the scan already zeroed
    ~Zero() {
      if (lo >= hi) return;
      if (doneLo >= doneHi) { std::memset(acc + lo, 0, sizeof(float) * (hi - lo)); return; }
      if (lo < doneLo) std::memset(acc + lo, 0, sizeof(float) * (doneLo - lo));
      if (hi > doneHi) std::memset(acc + doneHi, 0, sizeof(float) * (hi - doneHi));
    }
  } zero{acc, UINT32_MAX, 0};
  uint64_t read = 0;
  ExactBounds eb;
  if (p.exact) eb.init(s, items);
  // Lists read: all ('exact'), or the first ones up to the budget ('fast').
  size_t nsel = items.size();
  if (!p.exact) {
    uint64_t c = 0;
    for (nsel = 0; nsel < items.size() && c < budget; nsel++) c += s.list(items[nsel].list).count;
  }
  // 'exact' reads in chunks, checking the score bounds after 50, 75 and 90 % of the postings.
  std::vector<size_t> cuts;
  if (p.exact) {
    static const double kChecks[] = {0.5, 0.75, 0.9};
    uint64_t c = 0;
    int next = 0;
    for (size_t i = 0; i < nsel && next < 3; i++) {
      c += s.list(items[i].list).count;
      if (double(c) >= kChecks[next] * double(total)) {
        cuts.push_back(i + 1);
        while (next < 3 && double(c) >= kChecks[next] * double(total)) next++;
      }
    }
  }
  if (cuts.empty() || cuts.back() != nsel) cuts.push_back(nsel);
  size_t from = 0;
  for (size_t cut : cuts) {
    auto t0 = Clock::now();
    read += processItems(s, items.data() + from, cut - from, lo, hi, acc, zero.lo, zero.hi);
    if (stats) stats->taatMs += msSince(t0);
    if (p.exact) {
      for (size_t i = from; i < cut; i++) eb.markRead(s, items[i]);
    }
    from = cut;
    if (p.exact && cut < nsel && eb.worthChecking()) {
      // Score-bound check (MaxScore-like): what the unread lists can still add to any document lies in
      // [LB_rest, UB_rest]. If even UB_rest cannot lift an unread document to the k-th best lower bound,
      // the survivors are rescored exactly and the remaining lists are skipped.
      TopN t(p.k);
      scanTop(acc, lo, hi, sf, t, false);
      t.finish();
      if (t.full()) {
        const double thetaLb = double(t.min()) - errBound + eb.lbRest;
        if (eb.ubRest < thetaLb) {
          const float cutoff = static_cast<float>(thetaLb - errBound - eb.ubRest);
          std::vector<uint32_t> surv;
          for (uint32_t d = lo; d < hi && surv.size() <= kMaxSurvivors; d++) {
            if (acc[d] >= cutoff && sf.passes(d)) surv.push_back(d);
          }
          if (surv.size() <= kMaxSurvivors) {
            if (stats) { stats->postings += read; stats->rescored += surv.size(); stats->earlyExits++; }
            for (uint32_t d : surv) {
              const double sc = exactScore(s, d, qd);
              if (out.wouldTake(sc)) out.push({sc, s.id(d), s.meta(d)});
            }
            return;
          }
        }
      }
    }
  }
  if (stats) stats->postings += read;

  // Candidates: best accumulator values among documents that pass the filters. 'fast' zeroes the
  // accumulator as it scans (it is not read again).
  const size_t R = p.exact ? p.k : std::max<size_t>(size_t(3) * p.k, p.candidates);
  TopN top(R);
  auto t0 = Clock::now();
  scanTop(acc, lo, hi, sf, top, !p.exact);
  top.finish();
  if (stats) stats->scanMs += msSince(t0);
  if (!p.exact) { zero.doneLo = lo; zero.doneHi = hi; }
  auto& cands = top.items();
  std::vector<Scored> scored;
  scored.reserve(cands.size());
  for (auto& c : cands) scored.push_back({0.0, c.second});
  t0 = Clock::now();
  rescore(s, scored, qd);
  if (stats) stats->rescoreMs += msSince(t0);
  if (stats) stats->rescored += scored.size();

  if (p.exact && top.full()) {
    std::vector<double> ex;
    ex.reserve(scored.size());
    for (auto& x : scored) ex.push_back(x.exact);
    std::nth_element(ex.begin(), ex.begin() + (p.k - 1), ex.end(), std::greater<double>());
    const double theta = ex[p.k - 1];
    const double accMin = top.min();
    if (!(accMin + errBound < theta)) {
      // Not proven yet: every document that could still reach theta is rescored.
      const float cut = static_cast<float>(theta - errBound);
      std::vector<Scored> more;
      std::vector<uint32_t> seen;
      for (auto& x : scored) seen.push_back(x.d);
      std::sort(seen.begin(), seen.end());
      for (uint32_t d = lo; d < hi; d++) {
        if (acc[d] < cut) continue;
        if (std::binary_search(seen.begin(), seen.end(), d)) continue;
        if (!sf.passes(d)) continue;
        more.push_back({0.0, d});
      }
      rescore(s, more, qd);
      if (stats) stats->rescored += more.size();
      scored.insert(scored.end(), more.begin(), more.end());
    }
  }
  for (auto& x : scored) {
    if (out.wouldTake(x.exact)) out.push({x.exact, s.id(x.d), s.meta(x.d)});
  }
}

bool memPasses(const MemDoc& m, const Filters& f) {
  if (f.hasSince || f.hasUntil) {
    if (m.time == kNoTime) return false;
    if (f.hasSince && m.time < f.since) return false;
    if (f.hasUntil && m.time > f.until) return false;
  }
  if (f.hasSites && std::find(f.sites.begin(), f.sites.end(), m.site) == f.sites.end()) return false;
  if (!f.excludeSites.empty() && !m.site.empty() &&
      std::find(f.excludeSites.begin(), f.excludeSites.end(), m.site) != f.excludeSites.end()) return false;
  if (f.hasCategories && std::find(f.categories.begin(), f.categories.end(), m.cat) == f.categories.end()) return false;
  if (!f.excludeIds.empty() && std::find(f.excludeIds.begin(), f.excludeIds.end(), m.id) != f.excludeIds.end()) return false;
  return true;
}

}  // namespace

std::vector<Hit> search(const State& st, uint32_t width, const uint32_t* qidx, const float* qval, uint32_t qn,
                        const Filters& f, const SearchParams& p, SearchStats* stats) {
  gActiveSearches.fetch_add(1, std::memory_order_relaxed);
  struct Active {
    ~Active() { gActiveSearches.fetch_sub(1, std::memory_order_relaxed); }
  } active;
  auto& qdv = tls.qd;
  if (qdv.size() < width) qdv.assign(width, 0.0f);
  float* qd = qdv.data();
  for (uint32_t j = 0; j < qn; j++) qd[qidx[j]] = qval[j];
  struct Reset {
    float* qd; const uint32_t* idx; uint32_t n;
    ~Reset() { for (uint32_t j = 0; j < n; j++) qd[idx[j]] = 0.0f; }
  } reset{qd, qidx, qn};

  HitHeap out(p.k);
  double docs = 0;
  for (const auto& svp : st.segs) docs += svp->seg->ndocs();
  for (const auto& svp : st.segs) {
    const SegView& sv = *svp;
    if (stats) stats->segments++;
    SegFilter sf;
    if (!prepareFilter(sv, f, sf)) continue;
    SearchParams ps = p;
    ps.segShare = docs > 0 ? double(sv.seg->ndocs()) / docs : 1.0;
    searchSegment(sv, sf, qidx, qval, qn, qd, ps, out, stats);
  }
  if (st.mem) {
    for (const auto& mp : st.mem->docs) {
      const MemDoc& m = *mp;
      if (!memPasses(m, f)) continue;
      double sc = exactScore(m, qd);
      if (stats) stats->rescored++;
      if (out.wouldTake(sc)) out.push({sc, m.id, m.meta});
    }
  }
  return out.sorted();
}

}  // namespace scdv
