// The system dictionary's index (double array and token table) moved into 2 MB pages. MeCab maps sys.dic in 4 KB
// pages; a parse looks words up at random places in the index (~330 MB with neologd), so most lookups miss the
// TLB as well as the cache. Copied into transparent huge pages at the same address, a parse takes ~20 % less time
// (BENCHMARKS.md), for a private copy of the index per process (the features stay in the shared page cache).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace scdv_mecab {

/** A range of this process's address space. */
struct Mapping {
  uintptr_t start = 0;
  uintptr_t end = 0;
};

/** This process's mappings of `file` from its first byte (Linux: /proc/self/maps; elsewhere none). */
std::vector<Mapping> MappingsOf(const std::string& file);

/**
 * Replaces the first pages of a sys.dic mapping, up to the end of its token table, by a copy of them in
 * transparent huge pages; returns the bytes moved, 0 when nothing was (not Linux, huge pages off, the mapping not
 * aligned to 2 MB, or a call failed: then the file's pages stay, which read the same).
 */
size_t MoveIndexToHugePages(const Mapping& m);

}  // namespace scdv_mecab
