// Search over a snapshot of a collection: its segments (with deletions) and the in-memory WAL tail.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "segment.h"

namespace scdv {

/** A not-yet-flushed document from the write-ahead log. */
struct MemDoc {
  std::string id, meta, site, cat;
  int64_t time = kNoTime;
  std::vector<uint32_t> idx;
  std::vector<float> val;
};

/** The WAL tail: the latest upsert of each id, and the ids whose latest operation is a delete. */
struct MemTable {
  std::vector<std::shared_ptr<const MemDoc>> docs;
  std::unordered_map<std::string, size_t> pos;  // id -> index in docs
  std::unordered_set<std::string> deleted;
  uint64_t nnz = 0;
};

/** A segment as seen by one snapshot. */
struct SegView {
  std::shared_ptr<Segment> seg;
  std::shared_ptr<const Deletions> del;     // may be null
  std::string delPath;
  std::vector<uint32_t> hidden;             // sorted live locals whose id is in the memtable
  bool isDeleted(uint32_t d) const { return del && del->has(d); }
  bool isHidden(uint32_t d) const { return std::binary_search(hidden.begin(), hidden.end(), d); }
  uint32_t live() const { return seg->ndocs() - (del ? del->ndeleted : 0) - static_cast<uint32_t>(hidden.size()); }
};

struct State {
  std::vector<std::shared_ptr<const SegView>> segs;
  std::shared_ptr<const MemTable> mem;
};

struct Filters {
  bool hasSince = false, hasUntil = false;
  int64_t since = 0, until = 0;  // inclusive, epoch ms
  bool hasSites = false;
  std::vector<std::string> sites, excludeSites, categories;
  bool hasCategories = false;
  std::vector<std::string> excludeIds;
};

struct SearchParams {
  uint32_t k = 10;
  bool exact = false;
  double budget = 0.35;      // fast: share of the query's contribution mass read (lists by largest contribution first)
  uint32_t candidates = 1000; // fast: documents rescored exactly, shared among segments by size (at least 3k each)
  uint64_t minPostings = 100000;  // fast: read at least this many postings per segment (small segments: all)
  double segShare = 1.0;          // set per segment: its share of the collection's documents (scales candidates)
  uint32_t threads = 0;           // fast: threads per segment (0: split over idle cores when the segment is large)
  // fast: only the first `certified` hits (1..k; 0: all k) carry the guarantee of a search with k = certified (its
  // rescoring stop rule); the rest are the best of the documents scored exactly anyway (exact scores, best effort).
  uint32_t certified = 0;
};

struct SearchStats {
  uint64_t postings = 0;       // postings decoded (a 'fast' search run again with all its candidates: its last run's)
  uint64_t postingsTotal = 0;  // postings of every list the query touches
  uint64_t candidates = 0;     // 'fast': documents selected by accumulator value for rescoring
  uint64_t rescored = 0;       // documents scored exactly
  uint32_t segments = 0;
  uint32_t bruteSegments = 0;  // segments answered by scanning their filtered documents
  uint32_t earlyExits = 0;     // 'exact' segments finished early by the score-bound check
  uint32_t threads = 1;        // most threads one segment's search was split over
  double taatMs = 0, scanMs = 0, rescoreMs = 0;  // time in postings, candidate selection, exact rescoring (summed over threads)
};

struct Hit {
  double score;
  std::string_view id;   // valid while the snapshot lives
  std::string_view meta;
  // Where the document lives in the snapshot (a segment's local document, or the write buffer's): the fused
  // re-ranking (rerank.cc) reads the pool's vectors from there instead of looking the ids up again.
  const Segment* seg = nullptr;
  uint32_t doc = 0;
  const MemDoc* mem = nullptr;
};

/**
 * A live document's exact score against the dense query qd (width floats): the bits a search gives it (dotDense's
 * lanes; segments through dotForward). For re-scoring a few candidates by id (View.scores).
 */
double exactDocScore(const MemDoc& m, const float* qd);
double exactDocScore(const Segment& s, uint32_t d, const float* qd);

/** Top-k of the snapshot for the query (indices strictly increasing). Results sorted by score desc, id asc. */
std::vector<Hit> search(const State& st, uint32_t width, const uint32_t* qidx, const float* qval, uint32_t qn,
                        const Filters& f, const SearchParams& p, SearchStats* stats);

/**
 * Tests: every posting of the query's dims (all tiers, query order) summed term-at-a-time into one float per
 * local document, by the same block decoding as search (the SIMD or the baseline path: setSimd).
 */
std::vector<float> postingSums(const Segment& s, const uint32_t* qidx, const float* qval, uint32_t qn);

/**
 * Tests: the order 'fast' rescores candidates in (accumulator value desc, then local number), made as the search makes
 * it (PrefixOrder, as far as read): candidates (acc[i], doc[i]) read up to each of reads[] in turn with the given
 * step; returns the first max(reads) documents. Equal to the first of a full sort by that order.
 */
/**
 * Tests: whether a one-thread 'fast' search first keeps only the best 256 candidates (and runs again with all of them
 * when its rescoring might need more); on by default. Results are the same either way. Returns the state.
 */
bool setSpeculativeCandidates(bool on);

/** Tests: TopN's cut (detail::selectBest) on candidates (acc[i], doc[i]): the k documents kept, the k-th last. */
std::vector<uint32_t> candidateSelect(const float* acc, const uint32_t* doc, size_t n, size_t k);

std::vector<uint32_t> candidateOrder(const float* acc, const uint32_t* doc, size_t n, size_t step, const std::vector<size_t>& reads);

/**
 * Tests and diagnostics: the idle-core estimate behind the automatic thread choice (threads 0); setIdleCores(c)
 * with c >= 0 fixes it at c (every search of the process), a negative c restores the measurement.
 */
double idleCoresEstimate();
void setIdleCores(double cores);

}  // namespace scdv
