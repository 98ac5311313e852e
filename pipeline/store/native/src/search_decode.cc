// Posting-block decoding and term-at-a-time accumulation, window by window. Blocks are decoded 8 postings at a
// time with AVX2 when the CPU has it (compiled for that target alone, chosen at run time: simdEnabled()), else 4 at
// a time with the SSE4.1 baseline; both give the same docs and values, and the scatter into the accumulator is
// shared, so the sums are the same bits (tests/store/posting-simd.test.js).
#include "search_internal.h"

#include "fwd_codec.h"
#include "posting_codec.h"

#include <cstring>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace scdv::detail {

namespace {

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

#if defined(__x86_64__) || defined(_M_X64)
/**
 * decodeBlock with AVX2, 8 postings at a time (compiled for AVX2 alone, called only when the CPU has it):
 * the same docs[] and vals[] bits as the baseline path. Loads run up to 15 bytes past the block's gaps (into
 * the next block or PDATA's 16 zero bytes of padding); only docs[0..cnt) and vals[0..cnt) count.
 */
template <int B>
__attribute__((target("avx2"))) bool decodeBlockAvx2(const int8_t* w, const uint8_t* g, uint32_t cnt, uint32_t first,
                                                     uint32_t last, float sc, uint32_t* docs, float* vals) {
  const __m256 scv = _mm256_set1_ps(sc);
  for (uint32_t j = 0; j < cnt; j += 8) {
    const __m128i w8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(w + j));
    _mm256_store_ps(vals + j, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(w8)), scv));
  }
  docs[0] = first;
  if constexpr (B == 0) {
    const __m256i step = _mm256_set1_epi32(8);
    __m256i d = _mm256_add_epi32(_mm256_set1_epi32(int(first)), _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8));
    for (uint32_t j = 1; j < cnt; j += 8) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(docs + j), d);
      d = _mm256_add_epi32(d, step);
    }
    return first + (cnt - 1) == last;
  } else {
    static_assert(B == 8 || B == 16, "AVX2 decoding covers 0, 8 and 16-bit gaps");
    // Prefix sums of (gap + 1) in each 128-bit half, then the low half's total added to the high half.
    const __m256i one = _mm256_set1_epi32(1), top = _mm256_set1_epi32(7);
    __m256i carry = _mm256_set1_epi32(int(first));
    const uint32_t n = cnt - 1;
    for (uint32_t j = 0; j < n; j += 8) {
      __m256i x;
      if constexpr (B == 8) x = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(g + j)));
      else x = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g + 2 * j)));
      x = _mm256_add_epi32(x, one);
      x = _mm256_add_epi32(x, _mm256_slli_si256(x, 4));
      x = _mm256_add_epi32(x, _mm256_slli_si256(x, 8));
      const __m256i low3 = _mm256_shuffle_epi32(x, 0xff);
      x = _mm256_add_epi32(x, _mm256_permute2x128_si256(low3, low3, 0x08));
      x = _mm256_add_epi32(x, carry);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(docs + 1 + j), x);
      carry = _mm256_permutevar8x32_epi32(x, top);
    }
    return docs[cnt - 1] == last;
  }
}
#endif

/**
 * A patched block's n gaps (posting_codec.h) as u16 into out[0..n): the low bytes widened (16 at a time; loads
 * run up to 15 bytes past them, within the block, the next one or PDATA's padding), then the high bytes of the
 * wide gaps. False when a position is past the gaps (damaged data; positions out of order decode to other docs,
 * which the block's last doc check catches or not: never a read or write out of bounds).
 */
inline bool expandPatched(const uint8_t* g, uint32_t n, uint16_t* out) {
  uint32_t j = 0;
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  for (; j < n; j += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(g + j));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j), _mm_unpacklo_epi8(x, zero));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j + 8), _mm_unpackhi_epi8(x, zero));
  }
#else
  for (; j < n; j++) out[j] = g[j];
#endif
  const uint32_t c = g[n];
  const uint8_t* e = g + n + 1;
  for (uint32_t i = 0; i < c; i++, e += 2) {
    if (e[0] >= n) return false;
    out[e[0]] = static_cast<uint16_t>(out[e[0]] | (uint16_t(e[1]) << 8));
  }
  return true;
}

/**
 * acc[docs[j]] += vals[j] for one block, in order (the same sums on every path). Pointers, not a 32-bit index:
 * five instructions per posting instead of six, and eight postings per loop step.
 */
inline void scatter(const uint32_t* docs, const float* vals, uint32_t cnt, float* acc) {
  const uint32_t* const end = docs + cnt;
  for (; end - docs >= 8; docs += 8, vals += 8) {
    acc[docs[0]] += vals[0];
    acc[docs[1]] += vals[1];
    acc[docs[2]] += vals[2];
    acc[docs[3]] += vals[3];
    acc[docs[4]] += vals[4];
    acc[docs[5]] += vals[5];
    acc[docs[6]] += vals[6];
    acc[docs[7]] += vals[7];
  }
  for (; docs < end; docs++, vals++) acc[*docs] += *vals;
}

}  // namespace

std::vector<Cursor> cursors(const Segment& s, const Item* items, size_t n, uint32_t lo, uint32_t hi) {
  std::vector<Cursor> cur;
  cur.reserve(n);
  for (size_t i = 0; i < n; i++) {
    const ListInfo& L = s.list(items[i].list);
    const BlockInfo* B = s.blocks() + L.block0;
    // The first block with last >= lo; without a search when it is the list's first (a search from the start of
    // the segment: every list of a one-window or first-run search), sparing the reads of a binary search.
    uint32_t a = 0, z = L.nblocks && B[0].last >= lo ? 0 : L.nblocks;
    while (a < z) {
      uint32_t m = (a + z) / 2;
      if (B[m].last < lo) a = m + 1; else z = m;
    }
    if (a >= L.nblocks || B[a].first >= hi) continue;
    cur.push_back({B, L.nblocks, a, s.pdata() + L.dataOff, items[i].qv * L.scale});
  }
  return cur;
}

namespace {

/** processWindow with the AVX2 block decoder (kAvx2) or the baseline one; everything else is shared. */
template <bool kAvx2>
uint64_t windowT(const Segment& s, std::vector<Cursor>& cur, uint32_t w0, uint32_t base, float* acc) {
  const uint64_t w1 = uint64_t(w0) + kWindowDocs;
  alignas(32) uint32_t docs[kBlockSize + 8];
  alignas(32) float vals[kBlockSize + 8];
  alignas(32) uint16_t wide[kBlockSize + 16] = {};  // a patched block's gaps (read up to 8 past them: zeros or old gaps)
  const uint8_t* const wideBytes = reinterpret_cast<const uint8_t*>(wide);
  uint64_t read = 0;
  // Each list's next blocks are elsewhere in the postings (cache misses between one list and the next): the data of
  // the next list's block is prefetched while this one is decoded, and the block entry of the one after.
  const size_t ncur = cur.size();
  for (size_t ci = 0; ci < ncur; ci++) {
    Cursor& c = cur[ci];
    if (ci + 2 < ncur && cur[ci + 2].b < cur[ci + 2].nb) __builtin_prefetch(cur[ci + 2].B + cur[ci + 2].b);
    if (ci + 1 < ncur && cur[ci + 1].b < cur[ci + 1].nb) {
      // The whole block (weights, then gaps: up to ~400 bytes), not only its first line: the gaps' load missed.
      const uint8_t* nd = cur[ci + 1].base + cur[ci + 1].B[cur[ci + 1].b].dataRel;
      for (int l = 0; l < 6; l++) __builtin_prefetch(nd + 64 * l);
    }
    for (; c.b < c.nb; c.b++) {
      const BlockInfo& bk = c.B[c.b];
      if (bk.first >= w1) break;
      // The list's next block, while this one is decoded.
      if (c.b + 1 < c.nb) {
        const uint8_t* nd = c.base + c.B[c.b + 1].dataRel;
        for (int l = 0; l < 6; l++) __builtin_prefetch(nd + 64 * l);
      }
      const uint32_t cnt = uint32_t(bk.cntm1) + 1;
      const uint8_t* data = c.base + bk.dataRel;
      const int8_t* w = reinterpret_cast<const int8_t*>(data);
      const uint32_t first = bk.first - base, last = bk.last - base;
      bool ok;
#if defined(__x86_64__) || defined(_M_X64)
      if constexpr (kAvx2) {
        switch (bk.bits) {
          case 0: ok = decodeBlockAvx2<0>(w, data + cnt, cnt, first, last, c.sc, docs, vals); break;
          case 8: ok = decodeBlockAvx2<8>(w, data + cnt, cnt, first, last, c.sc, docs, vals); break;
          case 16: ok = first < UINT32_MAX - (1u << 23) && decodeBlockAvx2<16>(w, data + cnt, cnt, first, last, c.sc, docs, vals); break;
          case kGapsPatched:
            ok = first < UINT32_MAX - (1u << 23) && expandPatched(data + cnt, cnt - 1, wide) &&
                 decodeBlockAvx2<16>(w, wideBytes, cnt, first, last, c.sc, docs, vals);
            break;
          default: ok = decodeBlock<32>(w, data + cnt, cnt, first, last, c.sc, docs, vals); break;
        }
      } else
#endif
      {
        switch (bk.bits) {
          case 0: ok = decodeBlock<0>(w, data + cnt, cnt, first, last, c.sc, docs, vals); break;
          case 8: ok = decodeBlock<8>(w, data + cnt, cnt, first, last, c.sc, docs, vals); break;
          case 16: ok = first < UINT32_MAX - (1u << 23) && decodeBlock<16>(w, data + cnt, cnt, first, last, c.sc, docs, vals); break;
          case kGapsPatched:
            ok = first < UINT32_MAX - (1u << 23) && expandPatched(data + cnt, cnt - 1, wide) &&
                 decodeBlock<16>(w, wideBytes, cnt, first, last, c.sc, docs, vals);
            break;
          default: ok = decodeBlock<32>(w, data + cnt, cnt, first, last, c.sc, docs, vals); break;
        }
      }
      if (!ok) throw StoreError("segment " + s.path() + " is damaged: posting block does not decode", "CORRUPT");
      scatter(docs, vals, cnt, acc);
      read += cnt;
    }
  }
  return read;
}

}  // namespace

uint64_t processWindow(const Segment& s, std::vector<Cursor>& cur, uint32_t w0, uint32_t base, float* acc) {
  // simdEnabled(): the CPU has AVX2 (and F16C) and tests have not turned the SIMD paths off (fwd_codec.h).
  return simdEnabled() ? windowT<true>(s, cur, w0, base, acc) : windowT<false>(s, cur, w0, base, acc);
}

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

}  // namespace scdv::detail

namespace scdv {

std::vector<float> postingSums(const Segment& s, const uint32_t* qidx, const float* qval, uint32_t qn) {
  std::vector<detail::Item> items;
  for (uint32_t j = 0; j < qn; j++) {
    if (qidx[j] >= s.width()) throw StoreError("postingSums: index " + std::to_string(qidx[j]) + " is not below the width", "QUERY_INVALID");
    for (uint32_t l = s.listBegin(qidx[j]); l < s.listEnd(qidx[j]); l++) items.push_back({0.0f, qval[j], l, qidx[j]});
  }
  std::vector<float> acc(s.ndocs(), 0.0f);
  uint32_t lo = s.ndocs(), hi = 0;
  detail::processItems(s, items.data(), items.size(), 0, s.ndocs(), acc.data(), lo, hi);
  return acc;
}

}  // namespace scdv
