// The related list's re-ranking in the store (rerank.h): pipeline/match/rerank.js's searchReranked, feedbackRescored,
// rerank and duplicateOf, and vectorizer.js's expandQuery and DenseScratch, step for step. What makes the results
// the JS path's bit for bit:
// - JS numbers are doubles and Float32Array stores round to float: sums and products below are in double, a
//   float product (float × float, exact in double) added in the order the JS loop adds it, and a value stored in
//   a Float32Array is static_cast<float> of the double (both round to nearest even).
// - The addon is built with -ffp-contract=off (binding.gyp): no a*b+c is fused into an FMA the JS code does not make.
// - Sorts are by score desc, then id in JS string order (jsLess), a total order: any sort algorithm gives the
//   same list.
// - The feedback scores are the store's own exactDocScore, the function View.scores gives the JS path.
// - duplicateOf's angle bound (cos |θa − θb|) uses acos/cos, where this libm and V8's may differ by an ulp. That
//   changes whether a pair is skipped only when bound + 1e-6 is within an ulp (~1e-16) of the threshold, and the
//   answer only if that pair's similarity is then above the threshold, i.e. the bound is off by more than its
//   1e-6 slack (it is exact for unit vectors; stored vectors are unit to within their 11-bit rounding). Not a
//   proof, a ~1e-16 chance per compared pair: relied on (porting V8's fdlibm acos/cos would make it exact).
#include "rerank.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <unordered_map>

#include "segment.h"

namespace scdv {

bool jsLess(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; i++) {
    unsigned x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if (x == y) continue;
    // The first difference is at the same character boundary in both (valid UTF-8 after an equal prefix), or
    // inside the same character (continuation bytes, below 0xEE). Lead bytes 0xEE/0xEF (U+E000..U+FFFF) sort
    // above 0xF0..0xF4 (supplementary planes: surrogates 0xD800.. in UTF-16).
    if (x >= 0xEE && y >= 0xEE) {
      if (x < 0xF0) x += 0x10;
      if (y < 0xF0) y += 0x10;
    }
    return x < y;
  }
  return a.size() < b.size();
}

namespace {

/** Per pool thread: dense rows of the width, all zero between calls (cleared by their own indices). */
struct Scratch {
  std::vector<float> query;   // the query document (its similarity to a candidate)
  std::vector<float> cand;    // a candidate (its similarity to the kept results), or the expanded query
  std::vector<double> acc;    // expandQuery's sums
  std::vector<uint32_t> bits; // expandQuery's touched indices
  void fit(uint32_t width) {
    if (query.size() < width) {
      query.assign(width, 0.0f);
      cand.assign(width, 0.0f);
      acc.assign(width, 0.0);
      bits.assign((width + 31) / 32, 0);
    }
  }
};
thread_local Scratch tls;

/** A sparse vector spread over a dense row, cleared on release (DenseScratch). */
class Held {
 public:
  explicit Held(std::vector<float>& row) : row_(row.data()) {}
  ~Held() { release(); }
  void hold(const SparseRef& v) {
    release();
    for (uint32_t j = 0; j < v.n; j++) row_[v.idx[j]] = v.val[j];
    held_ = v;
    has_ = true;
  }
  bool holds(const float* val) const { return has_ && held_.val == val; }
  /** DenseScratch.dot: float × float products summed in double, in b's index order. */
  double dot(const SparseRef& b) const {
    double s = 0;
    for (uint32_t j = 0; j < b.n; j++) s += static_cast<double>(row_[b.idx[j]]) * static_cast<double>(b.val[j]);
    return s;
  }
  const float* row() const { return row_; }
  void release() {
    if (!has_) return;
    for (uint32_t j = 0; j < held_.n; j++) row_[held_.idx[j]] = 0.0f;
    has_ = false;
  }
 private:
  float* row_;
  SparseRef held_{nullptr, nullptr, 0};
  bool has_ = false;
};

/** The pool's stored vectors, decoded once per document (the JS path's cache of fetched vectors). */
class Vectors {
 public:
  SparseRef of(const Hit& h) {
    auto it = at_.find(h.id);
    if (it != at_.end()) return it->second;
    SparseRef r;
    if (h.mem) {
      r = {h.mem->idx.data(), h.mem->val.data(), static_cast<uint32_t>(h.mem->idx.size())};
    } else {
      const uint32_t n = h.seg->fwdCount(h.doc);
      auto& idx = idx_.emplace_back(n);
      auto& val = val_.emplace_back(n);
      h.seg->forward(h.doc, idx.data(), val.data());
      r = {idx.data(), val.data(), n};
    }
    at_.emplace(h.id, r);
    fetched_++;
    return r;
  }
  uint32_t fetched() const { return fetched_; }
 private:
  std::unordered_map<std::string_view, SparseRef> at_;
  std::deque<std::vector<uint32_t>> idx_;
  std::deque<std::vector<float>> val_;
  uint32_t fetched_ = 0;
};

bool ranksBefore(const Hit& x, const Hit& y) {
  if (x.score != y.score) return x.score > y.score;
  return jsLess(x.id, y.id);
}

/** rerank.js feedbackRescored: the pool re-scored against the query expanded with its first docs hits. */
std::vector<Hit> feedbackRescored(const std::vector<Hit>& hits, const SparseRef& q, const RerankSpec& spec, uint32_t width,
                                  Vectors& vecs) {
  std::vector<SparseRef> first;
  for (size_t i = 0; i < hits.size() && first.size() < spec.fbDocs; i++) {
    first.push_back(vecs.of(hits[i]));
  }
  if (first.empty()) return hits;
  std::vector<uint32_t> ei;
  std::vector<float> ev;
  expandQuery(q, first, spec.fbWeight, 2 * q.n, width, ei, ev);
  Held expanded(tls.cand);
  expanded.hold({ei.data(), ev.data(), static_cast<uint32_t>(ei.size())});
  std::vector<Hit> out = hits;
  for (Hit& h : out) h.score = h.mem ? exactDocScore(*h.mem, expanded.row()) : exactDocScore(*h.seg, h.doc, expanded.row());
  std::sort(out.begin(), out.end(), ranksBefore);
  return out;
}

/** rerank.js duplicateOf: the first kept result more similar than t to v (index into kept), or -1. */
int duplicateOf(const SparseRef& v, double score, const std::vector<Hit>& kept, const std::vector<SparseRef>& keptVectors,
                double t, Held& scratch, double& similarity) {
  const double theta = std::acos(std::max(-1.0, std::min(1.0, score)));
  for (size_t j = 0; j < kept.size(); j++) {
    const double bound = std::cos(std::fabs(theta - std::acos(std::max(-1.0, std::min(1.0, kept[j].score)))));
    if (bound + 1e-6 <= t) continue;
    if (!scratch.holds(v.val)) scratch.hold(v);
    const double s = scratch.dot(keptVectors[j]);
    if (s > t) { similarity = s; return static_cast<int>(j); }
  }
  return -1;
}

/** rerank.js rerank without recency and per-site caps: the first `want` hits that are not near-duplicates. */
void collapse(const std::vector<Hit>& ranked, const SparseRef& q, bool feedback, const RerankSpec& spec, Vectors& vecs,
              RerankResult& r) {
  const bool collapse = spec.collapse;
  const double t = spec.threshold;
  const size_t want = spec.want;
  std::vector<SparseRef> keptVectors;
  std::vector<size_t> droppedAt;
  long lastKeptAt = -1;
  Held query(tls.query);
  Held scratch(tls.cand);
  size_t i = 0;
  while (r.hits.size() < want && i < ranked.size()) {
    std::vector<size_t> batch;
    while (i < ranked.size() && batch.size() < want - r.hits.size()) {
      const Hit& h = ranked[i++];
      if (collapse && !feedback && h.score > t) {
        r.dropped.push_back({h.id, {}, false, h.score});
        droppedAt.push_back(i - 1);
        continue;
      }
      batch.push_back(i - 1);
    }
    if (collapse && feedback) query.hold(q);
    for (size_t j = 0; j < batch.size() && r.hits.size() < want; j++) {
      const Hit& h = ranked[batch[j]];
      if (collapse) {
        const SparseRef v = vecs.of(h);
        const double toQuery = feedback ? query.dot(v) : -std::numeric_limits<double>::infinity();
        if (toQuery > t) {
          r.dropped.push_back({h.id, {}, false, toQuery});
          droppedAt.push_back(batch[j]);
          continue;
        }
        double sim = 0;
        const int dup = duplicateOf(v, h.score, r.hits, keptVectors, t, scratch, sim);
        scratch.release();
        if (dup >= 0) {
          r.dropped.push_back({h.id, r.hits[dup].id, true, sim});
          droppedAt.push_back(batch[j]);
          continue;
        }
        keptVectors.push_back(v);
      }
      r.hits.push_back(h);
      lastKeptAt = static_cast<long>(batch[j]);
    }
    query.release();
  }
  // A full list reports what was dropped above its last result; a short one, everything it walked past.
  if (r.hits.size() >= want) {
    std::vector<DroppedHit> report;
    for (size_t j = 0; j < r.dropped.size(); j++) if (static_cast<long>(droppedAt[j]) < lastKeptAt) report.push_back(r.dropped[j]);
    r.dropped.swap(report);
  }
}

}  // namespace

void expandQuery(const SparseRef& q, const std::vector<SparseRef>& others, double weight, uint32_t maxNnz,
                 uint32_t width, std::vector<uint32_t>& outIdx, std::vector<float>& outVal) {
  tls.fit(width);
  double* acc = tls.acc.data();
  uint32_t* bits = tls.bits.data();
  uint32_t span = 0;
  size_t total = q.n;
  if (q.n) span = std::max(span, q.idx[q.n - 1] + 1);
  for (const auto& v : others) {
    if (v.n) span = std::max(span, v.idx[v.n - 1] + 1);
    total += v.n;
  }
  // Summed in the order q, others[0], others[1], … (vectorizer.js): f · value in double.
  const double w = weight / static_cast<double>(others.size());
  for (long t = -1; t < static_cast<long>(others.size()); t++) {
    const SparseRef& v = t < 0 ? q : others[t];
    const double f = t < 0 ? 1.0 : w;
    for (uint32_t j = 0; j < v.n; j++) {
      const uint32_t d = v.idx[j];
      acc[d] += f * static_cast<double>(v.val[j]);
      bits[d >> 5] |= 1u << (d & 31);
    }
  }
  std::vector<uint32_t> ai;
  std::vector<double> av;
  ai.reserve(total);
  av.reserve(total);
  for (uint32_t wd = 0; wd < (span + 31) / 32; wd++) {
    uint32_t word = bits[wd];
    if (!word) continue;
    bits[wd] = 0;
    while (word) {
      const uint32_t d = (wd << 5) | static_cast<uint32_t>(__builtin_ctz(word));
      word &= word - 1;
      const double x = acc[d];
      acc[d] = 0;
      if (x != 0) { ai.push_back(d); av.push_back(x); }
    }
  }
  double norm = 0;
  size_t n = ai.size();
  if (n > maxNnz) {
    // The maxNnz largest magnitudes; of those equal to the cut-off, the first in index order.
    std::vector<double> mags(n);
    for (size_t i = 0; i < n; i++) mags[i] = std::fabs(av[i]);
    std::nth_element(mags.begin(), mags.begin() + (maxNnz - 1), mags.end(), std::greater<double>());
    const double threshold = mags[maxNnz - 1];
    long ties = maxNnz;
    for (size_t i = 0; i < n; i++) if (std::fabs(av[i]) > threshold) ties--;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
      const double x = av[i];
      const double m = std::fabs(x);
      if (m > threshold || (m == threshold && ties-- > 0)) { ai[kept] = ai[i]; av[kept++] = x; norm += x * x; }
    }
    n = kept;
  } else {
    for (size_t i = 0; i < n; i++) norm += av[i] * av[i];
  }
  norm = std::sqrt(norm);
  outIdx.assign(ai.begin(), ai.begin() + n);
  outVal.resize(n);
  for (size_t i = 0; i < n; i++) outVal[i] = static_cast<float>(av[i] / norm);
}

RerankResult searchReranked(const State& st, uint32_t width, const uint32_t* qidx, const float* qval, uint32_t qn,
                            const Filters& f, SearchParams p, const RerankSpec& spec) {
  tls.fit(width);
  const bool feedback = spec.fbDocs > 0 && spec.fbWeight > 0;
  const SparseRef q{qidx, qval, qn};
  Vectors vecs;
  uint32_t n = p.k;
  for (;;) {
    p.k = n;
    const uint32_t certified = std::min(n, spec.head);
    p.certified = certified < n ? certified : 0;
    const std::vector<Hit> hits = search(st, width, qidx, qval, qn, f, p, nullptr);
    RerankResult r;
    if (feedback) collapse(feedbackRescored(hits, q, spec, width, vecs), q, true, spec, vecs, r);
    else collapse(hits, q, false, spec, vecs, r);
    if (r.hits.size() >= spec.want || hits.size() < n || n >= spec.maxK) {
      r.searched = n;
      r.fetched = vecs.fetched();
      return r;
    }
    n = std::min(spec.maxK, n * 2);
  }
}

LiveDoc findLive(const State& st, const std::string& id) {
  LiveDoc r;
  if (st.mem->deleted.count(id)) return r;
  auto it = st.mem->pos.find(id);
  if (it != st.mem->pos.end()) {
    r.mem = st.mem->docs[it->second].get();
    return r;
  }
  for (const auto& sv : st.segs) {
    int64_t d = sv->seg->lookup(id);
    if (d < 0 || sv->isDeleted(static_cast<uint32_t>(d))) continue;
    r.seg = sv->seg.get();
    r.doc = static_cast<uint32_t>(d);
    return r;
  }
  return r;
}

RerankResult searchRerankedById(const State& st, uint32_t width, const std::string& id, const Filters& f, SearchParams p,
                                const RerankSpec& spec, bool& found) {
  const LiveDoc at = findLive(st, id);
  found = at.mem || at.seg;
  if (!found) return {};
  if (at.mem) return searchReranked(st, width, at.mem->idx.data(), at.mem->val.data(), static_cast<uint32_t>(at.mem->idx.size()), f, p, spec);
  // The stored values as View.vectors hands them to JavaScript: the same query, bit for bit.
  const uint32_t n = at.seg->fwdCount(at.doc);
  std::vector<uint32_t> idx(n);
  std::vector<float> val(n);
  at.seg->forward(at.doc, idx.data(), val.data());
  return searchReranked(st, width, idx.data(), val.data(), n, f, p, spec);
}

}  // namespace scdv
