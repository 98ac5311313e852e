// Per-segment search (see pipeline/store/README.md, "How a search runs"):
//
//  1. Work items are the posting lists (dim, tier) of the query's dims, ordered by their largest possible
//     contribution |q_i| * max|value in list|.
//  2. Term-at-a-time, one window of kWindowDocs documents at a time: each list's blocks (int8 weights,
//     byte-aligned doc gaps, decoded with SSE4.1) are added into a float accumulator. 'exact' reads every
//     list (with a score-bound early exit that rarely fires on dense signed queries); 'fast' reads the lists in
//     that order until they hold the share `budget` of the query's contribution mass (listMass: a bound on
//     sum |q_i * value| over the list) and at least minPostings postings, and keeps a window-sized accumulator.
//  3. Candidates are the best accumulator values among documents passing the filters (deleted, hidden,
//     excluded ids, sites, categories; the time range is a range of local numbers).
//  4. Candidates are rescored exactly from the forward index (double accumulation of f32 products).
//  5. 'exact' then proves the result: every accumulator value is within E of the true score, where
//     E = sum_i |q_i| * (largest list scale of dim i) / 2 (+ float slack). With theta the k-th exact score
//     found, any document that could beat it has acc >= theta - E; those are all rescored too.
//
// Files: search.cc (this: the per-segment search, 'fast' and 'exact', and the whole-snapshot search),
// search_decode.cc (posting blocks into the accumulator), search_scan.cc (filters, candidate scan),
// search_pool.cc (helper threads), search_internal.h (what they share).
#include "search.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <chrono>
#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <unordered_map>

#include "search_internal.h"

namespace scdv {

using namespace detail;

double exactDocScore(const MemDoc& m, const float* qd) { return exactScore(m, qd); }
double exactDocScore(const Segment& s, uint32_t d, const float* qd) { return exactScore(s, d, qd); }

namespace {
std::atomic<bool> gSpeculate{true};
}  // namespace

bool setSpeculativeCandidates(bool on) {
  gSpeculate.store(on, std::memory_order_relaxed);
  return on;
}

namespace {

struct Scratch {
  std::vector<float> acc;   // 'exact': one float per document of the largest segment searched
  std::vector<float> wacc;  // 'fast': one window of kWindowDocs floats
  std::vector<float> qd;    // the query, dense
};
thread_local Scratch tls;

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
 * Contribution mass of a list for query value qv: |qv| * sqrt(energy * count), an upper bound of the sum of
 * |qv * value| over its postings (Cauchy-Schwarz) and equal to it when the values are alike. A few short lists of
 * large values (rare words of the hybrid layout) hold much of a query's mass; long lists of small values little.
 */
double listMass(const ListInfo& L, float qv) { return std::fabs(double(qv)) * std::sqrt(double(L.energy) * double(L.count)); }

/** rescoreAdaptive's chunk of candidates rescored at a time. */
constexpr size_t kChunk = 32;
/** The candidates rescoreAdaptive rescores before its stop rule applies. */
inline size_t minRescoredFor(uint32_t k, uint32_t certified) {
  constexpr size_t kMinRescored = 64;
  return std::max<size_t>({kMinRescored, 3 * size_t(certified), size_t(k)});
}

/**
 * Rescoring that stops when the rest cannot matter: candidates are taken by accumulator value (their approximate
 * score over the lists read), in chunks; once at least kMinRescored are exact and k are known, the next
 * candidate's accumulator plus the largest gap (exact - accumulator) seen so far, times kGapSafety, must still
 * reach the k-th exact score, or the rest are dropped. When the lists read hold nearly all of the documents' mass
 * (the hybrid vectors: gaps are small) a few chunks suffice; when they do not (pure SCDV vectors: wide gaps) it
 * rescores every candidate. Measured in BENCHMARKS.md ("Measurements behind the defaults").
 *
 * With ways > 1 (a search split over threads) a round rescores up to `ways` chunks at once, one per thread, and
 * the rule is then applied chunk by chunk in order, dropping the chunks after the first where it stops: the
 * documents rescored, hence the results, are those of one thread (the threads only waste up to ways - 1 chunks).
 * Only the first `certified` (<= k) results are certified: the rule keeps the `certified` best exact scores, so a
 * search with k = certified rescores the same documents (as long as k <= max(kMinRescored, 3 * certified)); at
 * least k are rescored, so that the tail (results certified + 1 .. k) is filled from the best of them.
 * `scored` receives the candidates rescored; `cand` is reordered.
 *
 * truncated: `cand` is the best of a larger candidate list (by the same total order), cut short. Returns false when
 * the rule read all of them and might have gone on in the larger list: the next candidate's value is at most the
 * last one's, so the rule would have stopped there if the last one's value passes its test, and true is returned
 * then; the documents rescored are those the larger list gives whenever true is returned.
 * known: what a truncated run rescored (`scored` of the run that returned false), reused in place of rescoring its
 * chunks again: the first chunks of the larger list hold the same documents (the order is total), and each chunk is
 * left sorted by local number by rescoreRange, so position by position they are the same.
 */
static bool rescoreAdaptive(std::vector<Scored>& scored, CandSpan cand, const Segment& s, const float* qd, uint32_t k,
                            uint32_t certified, uint32_t ways, bool truncated, const std::vector<Scored>& known) {
  // Safety factor on the largest gap seen: 1.5 kept recall@10 of the real hybrid vectors at 100k and 1M (1.000)
  // and of two synthetic pure-SCDV sets (within 0.0016 of factor 2) and rescores a third of what 2 does on the
  // hybrid vectors; 1 lost 2 points of recall on one set (BENCHMARKS.md "Measurements behind the defaults").
  constexpr double kGapSafety = 1.5;
  scored.clear();
  std::vector<double> best;  // min-heap of the `certified` best exact scores
  best.reserve(certified + 1);
  double gap = 0;
  const size_t minRescored = minRescoredFor(k, certified);
  // The candidates by accumulator value, then local number: a total order (a document is a candidate once), so
  // the order is unique. The rule usually stops after a few chunks of the 1,000 (~100 rescored on the hybrid
  // vectors), so the order is made only as far as it is read (PrefixOrder: in steps of the minimum rescored plus a
  // chunk): the same order as sorting them all, for a fraction of the comparisons.
  PrefixOrder order(cand.begin(), cand.end(), minRescored + kChunk, ByAccThenDoc());
  // Whether the candidates from the i-th on are dropped (i: candidates rescored so far).
  auto stopsAt = [&](size_t i) {
    if (!(i >= minRescored && best.size() >= certified)) return false;
    order.to(i + 1);
    return double(cand[i].first) + kGapSafety * gap < best.front();
  };
  size_t i = 0;
  while (i < cand.size() && !stopsAt(i)) {
    const size_t from = scored.size();
    const size_t end = std::min(cand.size(), i + size_t(std::max<uint32_t>(1, ways)) * kChunk);
    order.to(end);
    const uint32_t nchunks = static_cast<uint32_t>((end - i + kChunk - 1) / kChunk);
    for (size_t j = i; j < end; j++) scored.push_back({double(cand[j].first), cand[j].second, cand[j].first});
    // Each chunk is sorted by local number (for the prefetches) by rescoreRange.
    parallelFor(nchunks, ways, [&](uint32_t c) {
      const size_t a = from + size_t(c) * kChunk, m = std::min(kChunk, from + (end - i) - a);
      if (a + m <= known.size()) std::copy(known.begin() + a, known.begin() + a + m, scored.begin() + a);
      else rescoreRange(s, scored.data() + a, m, qd);
    });
    for (uint32_t c = 0; c < nchunks; c++) {
      if (c > 0 && stopsAt(i)) {
        scored.resize(from + size_t(c) * kChunk);
        return true;
      }
      const size_t a = from + size_t(c) * kChunk, n = std::min(kChunk, cand.size() - i);
      for (size_t j = a; j < a + n; j++) {
        gap = std::max(gap, scored[j].exact - double(scored[j].acc));
        if (best.size() < certified) { best.push_back(scored[j].exact); std::push_heap(best.begin(), best.end(), std::greater<double>()); }
        else if (scored[j].exact > best.front()) {
          std::pop_heap(best.begin(), best.end(), std::greater<double>());
          best.back() = scored[j].exact;
          std::push_heap(best.begin(), best.end(), std::greater<double>());
        }
      }
      i += n;
    }
  }
  if (!truncated || i < cand.size()) return true;  // stopped by the rule, or every candidate there is was read
  // stopsAt(i) of the larger list, with cand[i]'s value bounded by cand[i - 1]'s (addition is monotone).
  return i > 0 && i >= minRescored && best.size() >= certified && double(cand[i - 1].first) + kGapSafety * gap < best.front();
}

/**
 * 'fast': the first nsel lists (items sorted by largest possible contribution; toRead postings) are read one
 * window of kWindowDocs documents at a time into a window-sized accumulator (it stays in the L2 cache), which
 * is scanned for candidates and cleared before the next window; the best `candidates` documents are then
 * rescored exactly.
 *
 * Windows are independent, so a large segment's windows are split into runs (parallelFor: the caller's
 * thread and helpers), each with its own accumulator and candidates, when cores are idle: with
 * p.threads == 0, autoThreads (search_pool.cc) decides; p.threads > 0 sets the number of threads.
 */
void searchFast(const Segment& s, const SegFilter& sf, const std::vector<Item>& items, size_t nsel, uint64_t toRead,
                const float* qd, const SearchParams& p, HitHeap& out, SearchStats* stats) {
  const uint32_t lo = sf.lo, hi = sf.hi, n = s.ndocs();
  // Results certified (the rest of the k: best effort, rescoreAdaptive).
  const uint32_t certified = p.certified > 0 ? std::min(p.certified, p.k) : p.k;
  // Candidates: the segment's share of the budget (by its documents), and never fewer than 3 * certified (as a search
  // with k = certified has) nor than k.
  const size_t R = std::max<size_t>({size_t(3) * certified, size_t(p.k), static_cast<size_t>(std::ceil(double(p.candidates) * p.segShare))});
  const uint64_t wStart = lo - lo % kWindowDocs;
  const uint32_t nwin = static_cast<uint32_t>((uint64_t(hi) - wStart + kWindowDocs - 1) / kWindowDocs);
  uint32_t ways = p.threads > 0 ? p.threads : autoThreads(toRead);
  ways = std::max<uint32_t>(1, std::min<uint32_t>({ways, nwin, 8}));
  // Work units: runs of windows, several per thread, claimed one at a time, so that a helper that starts late
  // (or is descheduled) holds back at most one unit while the other threads take the rest.
  const uint32_t nunits = ways == 1 ? 1 : std::min<uint32_t>(nwin, 4 * ways);
  // A one-thread search first keeps only the best kSpecCands candidates (a multiple of the rescoring's chunk, so that
  // its chunks are those of the full list): the stop rule reads a few chunks of the R (~100 of 1,000 on related
  // queries, 256 or fewer on 95 % of them), and the top-N's pushes and cuts cost in proportion to R. When the rule
  // reads them all and might have gone on (rescoreAdaptive returns false), the search runs again with R: the
  // candidates, hence the documents rescored and the results, are the same as with R from the start (the order is
  // total, so the best kSpecCands are the first kSpecCands of the R).
  constexpr size_t kSpecCands = 256;
  struct Part {
    uint64_t w0 = 0, w1 = 0;  // windows [w0, w1)
    std::unique_ptr<TopN> top;
    uint64_t read = 0;
    double taatMs = 0, scanMs = 0;
  };
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
        // The first window of a run fills an empty candidate list: a sampled floor spares most of its pushes.
        if (pt.top->size() == 0) scanTopFirstAt(acc, a, b, base, sf, *pt.top);
        else scanTopAt(acc, a, b, base, sf, *pt.top, true);
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
  std::vector<Scored> scored, known;
  uint64_t read = 0, ncand = 0;
  double taatMs = 0, scanMs = 0, rescoreMs = 0;
  auto attempt = [&](size_t Rx) {
    std::vector<Part> parts(nunits);
    for (uint32_t i = 0; i < nunits; i++) {
      parts[i].w0 = wStart + uint64_t(nwin) * i / nunits * kWindowDocs;
      parts[i].w1 = std::min<uint64_t>(hi, wStart + uint64_t(nwin) * (i + 1) / nunits * kWindowDocs);
      parts[i].top = std::make_unique<TopN>(Rx);
    }
    parallelFor(nunits, ways, [&](uint32_t i) { runPart(parts[i]); });
    TopN& top = *parts[0].top;
    read = parts[0].read;  // the postings of the run whose candidates are rescored (as one run reads)
    taatMs += parts[0].taatMs;
    scanMs += parts[0].scanMs;
    for (uint32_t i = 1; i < nunits; i++) {
      for (auto& c : parts[i].top->items()) top.push(c.first, c.second);
      read += parts[i].read;
      taatMs += parts[i].taatMs;
      scanMs += parts[i].scanMs;
    }
    top.finish();
    scored.clear();
    scored.reserve(top.size());
    ncand = top.size();
    auto t0 = Clock::now();
    // A split search rescores on the same threads, by the one-thread rule (the same documents rescored).
    const bool complete = rescoreAdaptive(scored, top.items(), s, qd, p.k, certified, ways, Rx < R && top.full(), known);
    if (stats) rescoreMs += msSince(t0);
    return complete;
  };
  static_assert(kSpecCands % kChunk == 0, "the first list's chunks must be those of the full one");
  // Only when R is at least twice as many (k 50 of 300 candidates, say, saves little and runs again often: 13 % more CPU
  // measured) and the rule has room to stop before the end (a few chunks past its minimum).
  const bool speculate = gSpeculate.load(std::memory_order_relaxed) && nunits == 1 && 2 * kSpecCands <= R &&
                         minRescoredFor(p.k, certified) + 2 * kChunk <= kSpecCands;
  const size_t R0 = speculate ? kSpecCands : R;
  if (!attempt(R0)) {
    known.swap(scored);
    attempt(R);
  }
  if (stats) {
    stats->postings += read;
    stats->candidates += ncand;
    stats->rescored += scored.size();
    stats->taatMs += taatMs;
    stats->scanMs += scanMs;
    stats->rescoreMs += rescoreMs;
    stats->threads = std::max<uint32_t>(stats->threads, ways);
  }
  for (auto& x : scored) {
    if (out.wouldTake(x.exact)) out.push({x.exact, s.id(x.d), s.meta(x.d), &s, x.d});
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
  // The list table's entries of a query's dims are scattered over megabytes, and their cache misses held up this loop
  // (the largest part of its time on related queries): the entries of the dim kAhead on are prefetched (its two
  // cache lines: a dim's up to four lists of 48 bytes), and the list offsets of the dim 2 * kAhead on.
  constexpr uint32_t kAhead = 4;
  for (uint32_t j = 0; j < qn; j++) {
    if (j + 2 * kAhead < qn) s.prefetchListOffsets(qidx[j + 2 * kAhead]);
    if (j + kAhead < qn) s.prefetchLists(qidx[j + kAhead]);
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

  // Lists by largest possible contribution, then by list number: a total order (a list is an item once), so the
  // order the lists are read in, hence the accumulator's sums, is unique.
  auto byPrio = [](const Item& a, const Item& b) { return a.prio > b.prio || (a.prio == b.prio && a.list < b.list); };
  // 'fast' reads the first lists until they hold the share `budget` of the query's contribution mass, and at
  // least minPostings postings (a small segment is read whole). Only those need their order (a related query
  // reads ~6 % of its postings, in ~a fifth of its ~1,000 lists): PrefixOrder orders them as far as read.
  size_t fastLists = items.size();
  uint64_t fastPostings = total;
  if (!p.exact && p.budget < 1) {
    double massTotal = 0;  // summed in the order built (query dims, then tiers)
    for (const Item& it : items) massTotal += listMass(s.list(it.list), it.qv);
    const double massWanted = p.budget * massTotal * (1 - 1e-12);
    PrefixOrder order(items.data(), items.data() + items.size(), 256, byPrio);
    double mass = 0;
    fastPostings = 0;
    for (fastLists = 0; fastLists < items.size() && (mass < massWanted || fastPostings < p.minPostings); fastLists++) {
      order.to(fastLists + 1);
      mass += listMass(s.list(items[fastLists].list), items[fastLists].qv);
      fastPostings += s.list(items[fastLists].list).count;
    }
  } else {
    std::sort(items.begin(), items.end(), byPrio);
  }

  const double avgNnz = n ? double(s.nnz()) / n : 0;
  const double bruteCost = double(hi - lo) * (1.0 + sf.passShare * avgNnz);
  const double taatCost = double(fastPostings) * rangeShare + double(hi - lo) + 2.0 * p.candidates * avgNnz;
  if (bruteCost < 0.5 * taatCost) {
    // Few documents pass the filters: score them all exactly.
    if (stats) stats->bruteSegments++;
    for (uint32_t d = lo; d < hi; d++) {
      if (!sf.passes(d)) continue;
      double sc = exactScore(s, d, qd);
      if (stats) stats->rescored++;
      if (out.wouldTake(sc)) out.push({sc, s.id(d), s.meta(d), &s, d});
    }
    return;
  }

  if (!p.exact) {
    searchFast(s, sf, items, fastLists, fastPostings, qd, p, out, stats);
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
  const size_t nsel = items.size();  // 'exact' reads every list (unless the score bounds stop it)
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
              if (out.wouldTake(sc)) out.push({sc, s.id(d), s.meta(d), &s, d});
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
  const CandSpan cands = top.items();
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
    if (out.wouldTake(x.exact)) out.push({x.exact, s.id(x.d), s.meta(x.d), &s, x.d});
  }
}

}  // namespace

std::vector<Hit> search(const State& st, uint32_t width, const uint32_t* qidx, const float* qval, uint32_t qn,
                        const Filters& f, const SearchParams& p, SearchStats* stats) {
  gActiveSearches.fetch_add(1, std::memory_order_relaxed);
  // This thread's CPU time is the search's (the idle-core estimate leaves it out: search_pool.cc).
  struct Active {
    int64_t cpu0 = threadCpuNs();
    ~Active() {
      addSearchCpu(threadCpuNs() - cpu0);
      gActiveSearches.fetch_sub(1, std::memory_order_relaxed);
    }
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
      if (out.wouldTake(sc)) out.push({sc, m.id, m.meta, nullptr, 0, &m});
    }
  }
  return out.sorted();
}

}  // namespace scdv
