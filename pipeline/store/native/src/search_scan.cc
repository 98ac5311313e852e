// Filters resolved against one segment (and the WAL tail's documents), the candidate scan over an accumulator and
// the top-N's cut, and the test hooks on candidates (candidateSelect, candidateOrder).
#include "search_internal.h"

#include "fwd_codec.h"

#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace scdv::detail {

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

namespace {

/**
 * Whether a block of documents from doc0 on must let values equal to the threshold through: TopN admits a tie with
 * its N-th kept only with a smaller local number, and the floor is strict. A scan pushes in increasing local order, so
 * after its first cut this is false (the N-th kept came earlier) and the compare is `>` as before; a merge of a split
 * search's runs pushes in any order.
 */
inline bool tiesAdmitted(const TopN& top, uint32_t doc0, float floor) { return top.threshold() > floor && doc0 < top.thresholdDoc(); }

/** Pushes the documents of the bits of m (document docBase + d + i for bit i, its value vals[i]) that pass. */
inline void pushMasked(unsigned m, const float* vals, uint32_t doc0, const SegFilter& sf, TopN& top) {
  while (m) {
    const int i = __builtin_ctz(m);
    m &= m - 1;
    const float a = vals[i];
    if (!top.admits(a, doc0 + i)) continue;
    if (!sf.passes(doc0 + i)) continue;
    top.push(a, doc0 + i);
  }
}

#if defined(__x86_64__) || defined(_M_X64)
/**
 * The 16-at-a-time part of scanAbove with AVX2 (two compares of eight instead of four of four; compiled for AVX2
 * alone, called only when the CPU has it): the same documents pushed in the same order with the same threshold
 * per step, hence the same candidates. Returns where it stopped (the scalar tail does the rest).
 */
__attribute__((target("avx2"))) uint32_t scanAboveAvx2(float* acc, uint32_t lo, uint32_t hi, uint32_t docBase, const SegFilter& sf,
                                                       TopN& top, bool zeroAfter, float floor) {
  alignas(32) float tmp[16];
  const __m256 z = _mm256_setzero_ps();
  uint32_t d = lo;
  for (; d + 16 <= hi; d += 16) {
    const __m256 th = _mm256_set1_ps(std::max(top.threshold(), floor));
    const __m256 a0 = _mm256_loadu_ps(acc + d), a1 = _mm256_loadu_ps(acc + d + 8);
    unsigned m;
    if (tiesAdmitted(top, docBase + d, floor)) {
      m = unsigned(_mm256_movemask_ps(_mm256_cmp_ps(a0, th, _CMP_GE_OS))) | (unsigned(_mm256_movemask_ps(_mm256_cmp_ps(a1, th, _CMP_GE_OS))) << 8);
    } else {
      m = unsigned(_mm256_movemask_ps(_mm256_cmp_ps(a0, th, _CMP_GT_OS))) | (unsigned(_mm256_movemask_ps(_mm256_cmp_ps(a1, th, _CMP_GT_OS))) << 8);
    }
    if (zeroAfter) {
      _mm256_storeu_ps(acc + d, z);
      _mm256_storeu_ps(acc + d + 8, z);
    }
    if (!m) continue;
    _mm256_store_ps(tmp, a0);
    _mm256_store_ps(tmp + 8, a1);
    pushMasked(m, tmp, docBase + d, sf, top);
  }
  return d;
}
#endif

/** scanTopAt with the documents at or below `floor` left out (and acc left as it is unless zeroAfter). */
void scanAbove(float* acc, uint32_t lo, uint32_t hi, uint32_t docBase, const SegFilter& sf, TopN& top, bool zeroAfter, float floor) {
  uint32_t d = lo;
#if defined(__x86_64__) || defined(_M_X64)
  // simdEnabled(): the CPU has AVX2 and tests have not turned the SIMD paths off (fwd_codec.h).
  if (simdEnabled()) d = scanAboveAvx2(acc, lo, hi, docBase, sf, top, zeroAfter, floor);
#endif
#if defined(__SSE2__)
  alignas(16) float tmp[16];
  const __m128 z = _mm_setzero_ps();
  for (; d + 16 <= hi; d += 16) {
    const __m128 th = _mm_set1_ps(std::max(top.threshold(), floor));
    const __m128 a0 = _mm_loadu_ps(acc + d), a1 = _mm_loadu_ps(acc + d + 4);
    const __m128 a2 = _mm_loadu_ps(acc + d + 8), a3 = _mm_loadu_ps(acc + d + 12);
    unsigned m;
    if (tiesAdmitted(top, docBase + d, floor)) {
      m = unsigned(_mm_movemask_ps(_mm_cmpge_ps(a0, th))) | (unsigned(_mm_movemask_ps(_mm_cmpge_ps(a1, th))) << 4) |
          (unsigned(_mm_movemask_ps(_mm_cmpge_ps(a2, th))) << 8) | (unsigned(_mm_movemask_ps(_mm_cmpge_ps(a3, th))) << 12);
    } else {
      m = unsigned(_mm_movemask_ps(_mm_cmpgt_ps(a0, th))) | (unsigned(_mm_movemask_ps(_mm_cmpgt_ps(a1, th))) << 4) |
          (unsigned(_mm_movemask_ps(_mm_cmpgt_ps(a2, th))) << 8) | (unsigned(_mm_movemask_ps(_mm_cmpgt_ps(a3, th))) << 12);
    }
    if (zeroAfter) {
      _mm_storeu_ps(acc + d, z); _mm_storeu_ps(acc + d + 4, z);
      _mm_storeu_ps(acc + d + 8, z); _mm_storeu_ps(acc + d + 12, z);
    }
    if (!m) continue;
    _mm_store_ps(tmp, a0); _mm_store_ps(tmp + 4, a1); _mm_store_ps(tmp + 8, a2); _mm_store_ps(tmp + 12, a3);
    pushMasked(m, tmp, docBase + d, sf, top);
  }
#endif
  for (; d < hi; d++) {
    const float a = acc[d];
    if (zeroAfter) acc[d] = 0.0f;
    if (a <= floor || !top.admits(a, docBase + d)) continue;
    if (!sf.passes(docBase + d)) continue;
    top.push(a, docBase + d);
  }
}

}  // namespace

void selectBest(Cand* a, size_t n, size_t k) {
  const ByAccThenDoc better;
  float lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    lo = std::min(lo, a[i].first);
    hi = std::max(hi, a[i].first);
  }
  if (!(hi > lo) || n < 64) {  // one value (or few candidates): the order is the local numbers'
    std::nth_element(a, a + (k - 1), a + n, better);
    return;
  }
  // Bucket of a value: monotone in the value (a higher bucket holds only higher values; equal values share one).
  constexpr int kB = 256;
  const float scale = float(kB - 1) / (hi - lo);
  auto bucket = [&](float v) { return std::min(kB - 1, static_cast<int>((v - lo) * scale)); };
  // Four histograms in turn: consecutive values in one bucket do not wait for each other's increment.
  uint32_t cnt[4][kB] = {};
  for (size_t i = 0; i < n; i++) cnt[i & 3][bucket(a[i].first)]++;
  int kb = kB - 1;
  size_t above = 0;  // values in the buckets above kb
  for (;; kb--) {
    const size_t c = size_t(cnt[0][kb]) + cnt[1][kb] + cnt[2][kb] + cnt[3][kb];
    if (above + c >= k || kb == 0) break;
    above += c;
  }
  // Out of place, without branches: the buckets above kb to the front, kb's from the back; the rest is dropped.
  thread_local std::vector<Cand> tmp;
  if (tmp.size() < n) tmp.resize(n);
  Cand* t = tmp.data();
  size_t front = 0, back = n;
  for (size_t i = 0; i < n; i++) {
    const Cand e = a[i];
    const int b = bucket(e.first);
    t[front] = e;
    front += size_t(b > kb);
    t[back - 1] = e;
    back -= size_t(b == kb);
  }
  // front == above; kb's values are t[back, n), and the best k - above of them complete the k.
  std::nth_element(t + back, t + back + (k - above - 1), t + n, better);
  std::copy(t, t + above, a);
  std::copy(t + back, t + back + (k - above), a + above);
}

void scanTopAt(float* acc, uint32_t lo, uint32_t hi, uint32_t docBase, const SegFilter& sf, TopN& top, bool zeroAfter) {
  scanAbove(acc, lo, hi, docBase, sf, top, zeroAfter, -INFINITY);
}

void scanTopFirstAt(float* acc, uint32_t lo, uint32_t hi, uint32_t docBase, const SegFilter& sf, TopN& top) {
  constexpr uint32_t kStride = 32;
  const uint32_t m = (hi - lo) / kStride;
  const size_t rank = (2 * top.cap() + kStride - 1) / kStride;  // samples above the floor: ~2N documents
  if (top.size() != 0 || rank == 0 || rank * 4 > m) {
    scanAbove(acc, lo, hi, docBase, sf, top, true, -INFINITY);
    return;
  }
  // The floor: the rank-th largest sample, kept in a min-heap of the rank largest so far. After the first few
  // hundred samples nearly every one falls below the heap's top (one predictable comparison), where nth_element
  // over all the samples mispredicted about every other branch; the value is the same (the rank-th largest).
  thread_local std::vector<float> heap;
  heap.resize(rank);
  for (uint32_t i = 0; i < rank; i++) heap[i] = acc[lo + i * kStride];
  std::make_heap(heap.begin(), heap.end(), std::greater<float>());
  for (uint32_t i = static_cast<uint32_t>(rank); i < m; i++) {
    const float x = acc[lo + i * kStride];
    if (!(x > heap.front())) continue;
    std::pop_heap(heap.begin(), heap.end(), std::greater<float>());
    heap.back() = x;
    std::push_heap(heap.begin(), heap.end(), std::greater<float>());
  }
  const float floor = heap.front();
  scanAbove(acc, lo, hi, docBase, sf, top, false, floor);
  // Fewer than N above the floor: no cut happened, so every passing document above it is in `top`; add the rest.
  if (top.size() < top.cap()) {
    for (uint32_t d = lo; d < hi; d++) {
      const float a = acc[d];
      if (a > floor || !top.admits(a, docBase + d) || !sf.passes(docBase + d)) continue;
      top.push(a, docBase + d);
    }
  }
  std::memset(acc + lo, 0, sizeof(float) * (hi - lo));
}

}  // namespace scdv::detail

namespace scdv {

using namespace detail;

std::vector<uint32_t> candidateSelect(const float* acc, const uint32_t* doc, size_t n, size_t k) {
  if (k == 0 || k > n) throw StoreError("candidateSelect: k must be in 1..n", "QUERY_INVALID");
  std::vector<Cand> c(n);
  for (size_t i = 0; i < n; i++) c[i] = Cand{acc[i], doc[i]};
  selectBest(c.data(), n, k);
  std::vector<uint32_t> out(k);
  for (size_t i = 0; i < k; i++) out[i] = c[i].second;
  return out;
}

std::vector<uint32_t> candidateOrder(const float* acc, const uint32_t* doc, size_t n, size_t step, const std::vector<size_t>& reads) {
  std::vector<Cand> c(n);
  for (size_t i = 0; i < n; i++) c[i] = Cand{acc[i], doc[i]};
  PrefixOrder order(c.data(), c.data() + n, step, ByAccThenDoc());
  size_t most = 0;
  for (size_t m : reads) {
    order.to(std::min(m, n));
    most = std::max(most, std::min(m, n));
  }
  std::vector<uint32_t> out(most);
  for (size_t i = 0; i < most; i++) out[i] = c[i].second;
  return out;
}

}  // namespace scdv
