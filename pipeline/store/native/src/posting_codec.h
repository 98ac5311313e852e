// The doc gaps of a posting block (segment.h PDATA): their layouts, the builder's choice and their sizes.
//
// A block of cnt postings has cnt - 1 gaps (doc[j] - doc[j-1] - 1), laid out by BlockInfo.bits:
//   0            consecutive docs: no bytes;
//   8, 16, 32    every gap as u8, u16 or u32;
//   kGapsPatched (format 4) every gap's low byte (u8), then a u8 count c of the gaps of 256 or more and, for each of
//                them in order, its position (u8) and its high byte: 1 + 2c / (cnt - 1) bytes per gap instead of 2
//                where a block's largest gap needs 16 bits (on the benchmark's hybrid vectors 31 % of such a
//                block's gaps do: the tiers make sparse lists). Decoded by widening the low bytes to u16, patching,
//                then the 16-bit path (search_decode.cc), so SIMD prefix sums serve both.
// Formats 2 and 3 used 0, 8, 16 and 32 only (still read); format 4 writes the smallest of them for each block.
#pragma once
#include <cstdint>
#include <vector>

namespace scdv {

constexpr uint8_t kGapsPatched = 9;

/** Whether bits names a gap layout of this segment format. */
inline bool gapLayoutKnown(uint8_t bits, uint32_t version) {
  return bits == 0 || bits == 8 || bits == 16 || bits == 32 || (bits == kGapsPatched && version >= 4);
}

/**
 * Bytes of the gaps of a block of cnt postings. g: the block's gap bytes, of which a patched block's count (at
 * g[cnt - 1]) is read; the caller checked that the first cnt bytes of g are in the segment.
 */
inline uint64_t gapBytes(uint32_t cnt, uint8_t bits, const uint8_t* g) {
  if (bits == kGapsPatched) return uint64_t(cnt - 1) + 1 + 2 * uint64_t(g[cnt - 1]);
  return uint64_t(cnt - 1) * (bits / 8);
}

/** Appends the n gaps of a block in the smallest layout (format 4) and returns its bits. */
inline uint8_t appendGaps(std::vector<uint8_t>& out, const uint32_t* gaps, uint32_t n) {
  uint32_t maxgap = 0, wide = 0;
  for (uint32_t j = 0; j < n; j++) {
    maxgap = gaps[j] > maxgap ? gaps[j] : maxgap;
    wide += gaps[j] >= 256;
  }
  if (maxgap == 0) return 0;
  if (maxgap < 256) {
    for (uint32_t j = 0; j < n; j++) out.push_back(static_cast<uint8_t>(gaps[j]));
    return 8;
  }
  if (maxgap >= 65536) {
    for (uint32_t j = 0; j < n; j++) for (int k = 0; k < 4; k++) out.push_back(static_cast<uint8_t>(gaps[j] >> (8 * k)));
    return 32;
  }
  if (uint64_t(n) + 1 + 2 * uint64_t(wide) >= 2 * uint64_t(n)) {  // (n <= 127 < 256: positions and counts fit u8)
    for (uint32_t j = 0; j < n; j++) { out.push_back(static_cast<uint8_t>(gaps[j])); out.push_back(static_cast<uint8_t>(gaps[j] >> 8)); }
    return 16;
  }
  for (uint32_t j = 0; j < n; j++) out.push_back(static_cast<uint8_t>(gaps[j]));
  out.push_back(static_cast<uint8_t>(wide));
  for (uint32_t j = 0; j < n; j++) {
    if (gaps[j] >= 256) { out.push_back(static_cast<uint8_t>(j)); out.push_back(static_cast<uint8_t>(gaps[j] >> 8)); }
  }
  return kGapsPatched;
}

}  // namespace scdv
