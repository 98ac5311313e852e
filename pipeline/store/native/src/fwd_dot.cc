// Format 4's exact rescoring in one pass (fwd_codec.h: dotNibblesFused), AVX2 + FMA, chosen at run time with the
// other SIMD paths (setSimd). Per document, 16 entries at a time: the leading nibbles of their gaps become bytes;
// the long gaps' extra nibbles (those after the document's n leading ones, in entry order) are picked by
// shuffles at offsets from a byte prefix sum of each lane's extra count; the gaps + 1 are summed into indices in
// 16-bit lanes (8 gaps of at most 4,380 cannot wrap) and widened; the query is gathered at them; eight 11-bit codes
// are shifted into 32-bit lanes straight from their bytes; and the products are added in double in dotDense's
// lanes (j mod 4, the last n mod 4 into lane 0) and order. q * code is exact in double (24 + 11 bits), so a fused
// multiply-add rounds once, as the product-then-sum of the scalar path does: the same bits. No indices or values
// arrays are written. Groups with an 8-nibble gap (2 % of them on the benchmark's vectors) are decoded entry by
// entry. Nothing is read from the query at an index that was not checked against the width first.
#include "fwd_codec.h"

#include <cstring>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define SCDV_X86 1
#endif

namespace scdv {

#if SCDV_X86
namespace {

/**
 * For each bit offset b (0..7) of the first of eight codes: the four bytes of a 16-byte load (broadcast to both
 * halves) that each 32-bit lane takes, and the left shift that puts its code's top bit at bit 31 (codeAt's).
 */
struct CodeTables {
  alignas(32) uint8_t pick[8][32];
  alignas(32) uint32_t shift[8][8];
  CodeTables() {
    for (int b = 0; b < 8; b++) {
      for (int i = 0; i < 8; i++) {
        const int bit = b + 11 * i;
        for (int k = 0; k < 4; k++) pick[b][4 * i + k] = static_cast<uint8_t>((bit >> 3) + k);  // at most 13
        shift[b][i] = static_cast<uint32_t>(21 - (bit & 7));
      }
    }
  }
};
const CodeTables kCodeTables;

/** Eight codes from p (bit offset given by pick / shift), sign-extended into 32-bit lanes. */
__attribute__((target("avx2"))) inline __m256i codes8(const uint8_t* p, __m256i pick, __m256i shift) {
  const __m256i x = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_srai_epi32(_mm256_sllv_epi32(_mm256_shuffle_epi8(x, pick), shift), 21);
}

/** acc (lanes j mod 4) += q * code for eight entries: first the four of lanes 0..3, then the next four. */
__attribute__((target("avx2,fma"))) inline __m256d add8(__m256d acc, __m256 q, __m256i c) {
  acc = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(q)), _mm256_cvtepi32_pd(_mm256_castsi256_si128(c)), acc);
  return _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(q, 1)), _mm256_cvtepi32_pd(_mm256_extracti128_si256(c, 1)), acc);
}

/**
 * Byte idx of the 16 (Wide: 48) nibbles e[0..], or 0 for idx 0xc0 .. 0xef. A shuffle takes 16 bytes and gives 0
 * for an index with its top bit set: so each window gets its part of idx raised by 0x70 (saturating), which sets
 * the top bit of every index below or past its 16 (and keeps it set on those from 0xc0 on).
 */
template <bool Wide>
__attribute__((target("avx2"))) inline __m128i pickNibble(const __m128i* e, __m128i idx) {
  if (!Wide) return _mm_shuffle_epi8(e[0], idx);
  const __m128i lift = _mm_set1_epi8(0x70), k16 = _mm_set1_epi8(16);
  const __m128i i1 = _mm_sub_epi8(idx, k16), i2 = _mm_sub_epi8(i1, k16);
  return _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(e[0], _mm_adds_epu8(idx, lift)), _mm_shuffle_epi8(e[1], _mm_adds_epu8(i1, lift))),
                      _mm_shuffle_epi8(e[2], _mm_adds_epu8(i2, lift)));
}

/**
 * A group of 16 entries whose long gaps have at most 3 extra nibbles each, odd + their count <= 16 (Wide: 48):
 * lead (the leading nibbles), ec (extra nibbles of each lane), sum (ec's inclusive prefix sums), win (the byte
 * holding the group's first extra nibble; 8 bytes readable, Wide: 24), odd (whether that nibble is the byte's
 * high one). Sets ia, ib to the indices of lanes 0..7, 8..15 (carry: the previous index in every lane; then this
 * group's last).
 */
template <bool Wide>
__attribute__((target("avx2"))) inline void extraGaps(__m128i lead, __m128i ec, __m128i sum, const uint8_t* win, uint64_t odd,
                                                      __m256i& carry, __m256i& ia, __m256i& ib) {
  const __m128i low4 = _mm_set1_epi8(0x0f);
  __m128i e[3];
  if (Wide) {
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(win));
    const __m128i lo = _mm_and_si128(y, low4), hi = _mm_and_si128(_mm_srli_epi16(y, 4), low4);
    e[0] = _mm_unpacklo_epi8(lo, hi);
    e[1] = _mm_unpackhi_epi8(lo, hi);
    int64_t raw;
    std::memcpy(&raw, win + 16, 8);
    const __m128i z = _mm_cvtsi64_si128(raw);
    e[2] = _mm_unpacklo_epi8(_mm_and_si128(z, low4), _mm_and_si128(_mm_srli_epi16(z, 4), low4));
  } else {
    int64_t raw;
    std::memcpy(&raw, win, 8);
    const __m128i y = _mm_cvtsi64_si128(raw);
    e[0] = _mm_unpacklo_epi8(_mm_and_si128(y, low4), _mm_and_si128(_mm_srli_epi16(y, 4), low4));
  }
  // Lane i's k-th extra nibble is e[odd + (exclusive prefix sum)_i + k] when k < ec_i, else 0: the index plus
  // (by leading nibble) k, or 0xc0, which leaves every window's index with its top bit set (at <= 47).
  const __m128i at = _mm_add_epi8(_mm_sub_epi8(sum, ec), _mm_set1_epi8(static_cast<char>(odd)));
  constexpr char X = char(0xc0);
  const __m128i k0 = _mm_setr_epi8(X, X, X, X, X, X, X, X, X, X, X, X, 0, 0, 0, X);
  const __m128i k1 = _mm_setr_epi8(X, X, X, X, X, X, X, X, X, X, X, X, X, 1, 1, X);
  const __m128i k2 = _mm_setr_epi8(X, X, X, X, X, X, X, X, X, X, X, X, X, X, 2, X);
  const __m128i n0 = pickNibble<Wide>(e, _mm_add_epi8(at, _mm_shuffle_epi8(k0, lead)));
  const __m128i n1 = pickNibble<Wide>(e, _mm_add_epi8(at, _mm_shuffle_epi8(k1, lead)));
  const __m128i n2 = pickNibble<Wide>(e, _mm_add_epi8(at, _mm_shuffle_epi8(k2, lead)));
  const __m128i lo = _mm_or_si128(n0, _mm_slli_epi16(n1, 4));  // n1 < 16: no bit crosses into the next byte
  // gap + 1 of a short gap, or kNibbleBase + 1 of a long one (13, 29, 285), as low and high bytes.
  const __m128i baseLo = _mm_setr_epi8(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 29, 285 - 256, 0);
  const __m128i baseHi = _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0);
  const __m128i bl = _mm_shuffle_epi8(baseLo, lead), bh = _mm_shuffle_epi8(baseHi, lead);
  // gap + 1 per lane as u16, then prefix sums within each half (8 lanes of at most 4,380: below 2^16).
  __m256i g = _mm256_add_epi16(_mm256_set_m128i(_mm_unpackhi_epi8(lo, n2), _mm_unpacklo_epi8(lo, n2)),
                               _mm256_set_m128i(_mm_unpackhi_epi8(bl, bh), _mm_unpacklo_epi8(bl, bh)));
  g = _mm256_add_epi16(g, _mm256_slli_si256(g, 2));
  g = _mm256_add_epi16(g, _mm256_slli_si256(g, 4));
  g = _mm256_add_epi16(g, _mm256_slli_si256(g, 8));
  const __m256i lane7 = _mm256_set1_epi32(7);
  ia = _mm256_add_epi32(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(g)), carry);
  carry = _mm256_permutevar8x32_epi32(ia, lane7);
  ib = _mm256_add_epi32(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(g, 1)), carry);
  carry = _mm256_permutevar8x32_epi32(ib, lane7);
}

__attribute__((target("avx2,fma"))) bool dotFusedAvx2(const uint8_t* p, uint64_t bytes, const uint8_t* codes, uint64_t first,
                                                      uint64_t n, const float* qd, uint64_t width, double* out) {
  const uint64_t total = 2 * bytes;
  // Indices below 2^31 (gathers take signed lanes) and no sum wrapping 2^32; otherwise the reference path.
  if (n == 0 || n > total || width > (uint64_t(1) << 31)) return false;
  const uint64_t b = (11 * first) & 7;
  const uint8_t* cp = codes + ((11 * first) >> 3);  // eight codes take 11 bytes: every group has offset b
  const __m256i pick = _mm256_load_si256(reinterpret_cast<const __m256i*>(kCodeTables.pick[b]));
  const __m256i shift = _mm256_load_si256(reinterpret_cast<const __m256i*>(kCodeTables.shift[b]));
  const __m128i low4 = _mm_set1_epi8(0x0f), iota = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  // Extra nibbles by leading nibble (fwd_codec.h); 15's 8 as 64, so that a group with such a lane sums past 48
  // (the prefix sums saturate) and takes the slow way.
  const __m128i extraOf = _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 64);
  __m256i carry = _mm256_set1_epi32(-1);  // the previous index in every lane (-1 before the first), mod 2^32
  __m256d acc = _mm256_setzero_pd();
  alignas(32) double a[4];  // the lanes, once the last (partial) group has added its last products to lane 0
  bool inA = false;
  uint64_t extra = n;  // nibble position of the next long gap's extra nibbles
  alignas(32) uint32_t ix[16];
  for (uint64_t j = 0; j < n; j += 16) {
    const uint64_t m = n - j < 16 ? n - j : 16;
    int64_t raw;
    std::memcpy(&raw, p + j / 2, 8);  // within the document's bytes and the padding (j < n <= 2 bytes)
    const __m128i x = _mm_cvtsi64_si128(raw);
    __m128i lead = _mm_unpacklo_epi8(_mm_and_si128(x, low4), _mm_and_si128(_mm_srli_epi16(x, 4), low4));
    if (m < 16) lead = _mm_and_si128(lead, _mm_cmpgt_epi8(_mm_set1_epi8(static_cast<char>(m)), iota));  // lanes past n: gap 0
    const __m128i ec = _mm_shuffle_epi8(extraOf, lead);
    __m128i sum = _mm_adds_epu8(ec, _mm_slli_si128(ec, 1));  // inclusive prefix sums (saturating: 64s stay large)
    sum = _mm_adds_epu8(sum, _mm_slli_si128(sum, 2));
    sum = _mm_adds_epu8(sum, _mm_slli_si128(sum, 4));
    sum = _mm_adds_epu8(sum, _mm_slli_si128(sum, 8));
    const uint64_t odd = extra & 1, groupExtra = static_cast<uint32_t>(_mm_extract_epi8(sum, 15));
    __m256i ia, ib;
    // One load of 16 nibbles holds the group's extra ones (the dense part of a hybrid vector), or three (its
    // sparse part: mostly 2 or 3 extra nibbles a gap) when 24 bytes from there are the document's or the padding.
    const bool narrow = odd + groupExtra <= 16, wide = !narrow && odd + groupExtra <= 48 && extra / 2 + 24 <= bytes + kFwdPad;
    if (narrow || wide) {
      if (narrow) extraGaps<false>(lead, ec, sum, p + extra / 2, odd, carry, ia, ib);
      else extraGaps<true>(lead, ec, sum, p + extra / 2, odd, carry, ia, ib);
      extra += groupExtra;
      // Indices increase (no wrap: the previous one is below 2^31, the group adds at most 16 * 4,380), so the
      // group's last is its largest.
      if (extra > total || (m == 16 && uint32_t(_mm256_cvtsi256_si32(carry)) >= width)) return false;
    } else {
      // An 8-nibble gap, or many long ones: entry by entry in 64-bit arithmetic, every index checked.
      alignas(16) uint8_t ld[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(ld), lead);
      int64_t prev = j == 0 ? -1 : int64_t(uint32_t(_mm256_cvtsi256_si32(carry)));
      for (uint64_t k = 0; k < 16; k++) {
        uint64_t gap = ld[k];
        if (k < m && gap >= kNibbleDirect) {
          const uint64_t c = gap - kNibbleDirect;
          if (extra + kNibbleExtra[c] > total) return false;
          gap = kNibbleBase[c] + (nibbleWindow(p, extra) & kNibbleMask[c]);
          extra += kNibbleExtra[c];
        }
        prev += int64_t(gap) + 1;
        if (k < m && uint64_t(prev) >= width) return false;
        ix[k] = static_cast<uint32_t>(prev);
      }
      ia = _mm256_load_si256(reinterpret_cast<const __m256i*>(ix));
      ib = _mm256_load_si256(reinterpret_cast<const __m256i*>(ix + 8));
      carry = _mm256_set1_epi32(static_cast<int32_t>(ix[15]));
    }
    if (m == 16) {
      acc = add8(acc, _mm256_i32gather_ps(qd, ia, 4), codes8(cp, pick, shift));
      acc = add8(acc, _mm256_i32gather_ps(qd, ib, 4), codes8(cp + 11, pick, shift));
      cp += 22;
      continue;
    }
    // The last, partial group: lanes past m are not the document's (their indices may pass the width).
    _mm256_store_si256(reinterpret_cast<__m256i*>(ix), ia);
    _mm256_store_si256(reinterpret_cast<__m256i*>(ix + 8), ib);
    if (ix[m - 1] >= width) return false;  // (the slow way checked each already)
    uint64_t h = 0;
    if (m >= 8) {
      acc = add8(acc, _mm256_i32gather_ps(qd, ia, 4), codes8(cp, pick, shift));
      h = 8;
    }
    if (h + 4 <= m) {
      const uint64_t e = first + j + h;
      const __m128 q4 = _mm_setr_ps(qd[ix[h]], qd[ix[h + 1]], qd[ix[h + 2]], qd[ix[h + 3]]);
      const __m128i c4 = _mm_setr_epi32(codeAt(codes, e), codeAt(codes, e + 1), codeAt(codes, e + 2), codeAt(codes, e + 3));
      acc = _mm256_fmadd_pd(_mm256_cvtps_pd(q4), _mm256_cvtepi32_pd(c4), acc);
      h += 4;
    }
    // The last n mod 4 into lane 0, one at a time.
    _mm256_store_pd(a, acc);
    inA = true;
    for (; h < m; h++) a[0] += double(qd[ix[h]]) * double(codeAt(codes, first + j + h));
  }
  if ((extra + 1) / 2 != bytes) return false;
  if (!inA) _mm256_store_pd(a, acc);
  *out = (a[0] + a[1]) + (a[2] + a[3]);
  return true;
}

}  // namespace
#endif

bool dotNibblesFused(const uint8_t* nibbles, uint64_t bytes, const uint8_t* codes, uint64_t first, uint64_t n,
                     const float* qd, uint64_t width, double* out) {
#if SCDV_X86
  if (simdEnabled()) return dotFusedAvx2(nibbles, bytes, codes, first, n, qd, width, out);
#endif
  return false;
}

}  // namespace scdv
