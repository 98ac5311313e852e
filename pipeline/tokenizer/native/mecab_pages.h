// The system dictionary's index (double array and token table) moved into 2 MB pages. MeCab maps sys.dic in 4 KB
// pages; a parse looks words up at random places in the index (~330 MB with neologd), so most lookups miss the
// TLB as well as the cache. Copied into transparent huge pages at the same address, a parse takes ~20 % less CPU
// (BENCHMARKS.md), for a private copy of the index per process (the features stay in the shared page cache). The
// copy is made when it pays: once the process has parsed as much text as 1/32 of the index (~10 MB with neologd,
// the copy's CPU earned back), on a background thread, while parsing goes on in the file's pages.
#pragma once
#include <mecab.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace scdv_mecab {

/** A range of this process's address space. */
struct Mapping {
  uintptr_t start = 0;
  uintptr_t end = 0;
};

struct ModelDeleter {
  void operator()(MeCab::Model* m) const { MeCab::deleteModel(m); }
};
using ModelPtr = std::unique_ptr<MeCab::Model, ModelDeleter>;

/** A MeCab model shared by the taggers of one process (mecab_options.cc: one per dictionary and user dictionaries). */
struct SharedModel {
  ModelPtr model;
  Mapping index;                         // its mapping of sys.dic (empty when not found)
  uint64_t moveAfterBytes = UINT64_MAX;  // text to parse before the index is copied (never: it cannot be)
  std::atomic<bool> wantHugePages{false};
  std::atomic<uint64_t> parsedBytes{0};
  std::atomic<bool> moveStarted{false};
  std::atomic<size_t> hugePageBytes{0};  // of the index now in huge pages
};

/** This process's mappings of `file` from its first byte (Linux: /proc/self/maps; elsewhere none). */
std::vector<Mapping> MappingsOf(const std::string& file);

/**
 * Bytes of a sys.dic mapping that MoveIndexToHugePages would move: its first pages up to the end of the token
 * table, in whole 2 MB pages; 0 when it cannot (not Linux, huge pages off, the mapping not aligned to 2 MB).
 */
size_t MovableIndexBytes(const Mapping& m);

/**
 * Replaces the first MovableIndexBytes of a sys.dic mapping by a copy of them in transparent huge pages; returns the
 * bytes moved, 0 when nothing was (then the file's pages stay, which read the same). Safe while other threads parse:
 * the swap is one mremap, and both sides hold the same bytes.
 */
size_t MoveIndexToHugePages(const Mapping& m);

/**
 * Counts `bytes` of text parsed with the model; when huge pages were asked for and enough text has been parsed,
 * starts the move on a background thread (once).
 */
void NoteParsed(const std::shared_ptr<SharedModel>& m, size_t bytes);

}  // namespace scdv_mecab
