// The related list's re-ranking (pipeline/match/rerank.js, searchReranked) done whole in the store: the pool
// search, pseudo-relevance feedback, the near-duplicate collapse and the pool doubling, from one snapshot, on the
// calling thread (a search thread of search_queue.h, addon_rerank.cc). The JS function stays the definition: this file mirrors
// it bit for bit (tests/store/rerank-native.test.js compares the two), so every rounding step below is the one
// the JS code makes with its doubles and Float32Arrays.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "search.h"

namespace scdv {

/** What searchReranked needs besides the query and the search options (no recency, no per-site cap). */
struct RerankSpec {
  uint32_t want = 10;      // results wanted (from + k)
  uint32_t maxK = 100;     // the pool never grows beyond this
  uint32_t head = 10;      // the pool's ranks that must be certified: max(want, feedback docs)
  bool collapse = false;   // near-duplicate collapsing on (threshold below)
  double threshold = 0;
  uint32_t fbDocs = 0;     // pseudo-relevance feedback: 0 = off
  double fbWeight = 0;
};

/** A dropped near-duplicate: of the query document (of empty, hasOf false) or of a kept hit. */
struct DroppedHit {
  std::string_view id;
  std::string_view of;
  bool hasOf = false;
  double similarity = 0;
};

struct RerankResult {
  std::vector<Hit> hits;          // kept, best first (score: the feedback cosine when feedback re-scored the pool)
  std::vector<DroppedHit> dropped;
  uint32_t searched = 0;          // the pool size finally searched
  uint32_t fetched = 0;           // stored vectors decoded (searchReranked's `fetched`)
};

/**
 * searchReranked for the native store: p.k is the first pool size (JS: poolPlan), p.certified is set per pool
 * from spec.head. The strings in the result point into the snapshot (valid while st lives).
 */
RerankResult searchReranked(const State& st, uint32_t width, const uint32_t* qidx, const float* qval, uint32_t qn,
                            const Filters& f, SearchParams p, const RerankSpec& spec);

/**
 * Where a snapshot keeps the live copy of an id: the write buffer's document (mem), or a segment's local document
 * (seg, doc); both null when no live document has the id. The one lookup of the view's get, vectors and scores and
 * of searchRerankedById.
 */
struct LiveDoc {
  const MemDoc* mem = nullptr;
  const Segment* seg = nullptr;
  uint32_t doc = 0;
};
LiveDoc findLive(const State& st, const std::string& id);

/**
 * searchReranked with the stored vector of the live document `id` as the query (looked up in the same snapshot, on
 * the calling thread): found false, and nothing searched, when no live document has the id.
 */
RerankResult searchRerankedById(const State& st, uint32_t width, const std::string& id, const Filters& f, SearchParams p,
                                const RerankSpec& spec, bool& found);

/**
 * JS's `a < b` on two ids given as UTF-8: UTF-16 code unit order, which differs from byte (code point) order only
 * between U+E000..U+FFFF and the supplementary planes (surrogate pairs sort below U+E000 in UTF-16).
 */
bool jsLess(std::string_view a, std::string_view b);

/**
 * Rocchio's expanded query, as vectorizer.js expandQuery computes it (exposed for its test).
 * others: pointers to (indices, values, n) triples.
 */
struct SparseRef {
  const uint32_t* idx;
  const float* val;
  uint32_t n;
};
void expandQuery(const SparseRef& q, const std::vector<SparseRef>& others, double weight, uint32_t maxNnz,
                 uint32_t width, std::vector<uint32_t>& outIdx, std::vector<float>& outVal);

}  // namespace scdv
