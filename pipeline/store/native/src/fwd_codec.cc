// The forward index's decoding (fwd_codec.h): 11-bit values and nibble index gaps (format 4), 12-bit values
// (format 3), float16 values (format 2) with a run-time choice between F16C and scalar code (same bits), and
// the LEB128 varint index gaps of formats 2 and 3.
#include "fwd_codec.h"

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "segment.h"
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define SCDV_X86 1
#endif
#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif

namespace scdv {

namespace {

#if SCDV_X86
__attribute__((target("avx2,f16c"))) void halvesToFloatsF16C(const uint16_t* h, float* out, size_t n) {
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    _mm256_storeu_ps(out + j, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + j))));
  }
  for (; j < n; j++) out[j] = halfToFloat(h[j]);
}

bool cpuHasF16C() {
  __builtin_cpu_init();
  // FMA too: the fused rescoring (fwd_dot.cc) is on the same switch (every AVX2 CPU has it).
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c") && __builtin_cpu_supports("fma");
}
#else
bool cpuHasF16C() { return false; }
#endif

std::atomic<bool> gSimd{cpuHasF16C()};

/**
 * The rest of a varint whose first byte (first, >= 0x80) was read: p just after it. Returns the position after
 * the varint and the gap, or nullptr when it runs past end or past 35 bits.
 */
struct Gap {
  const uint8_t* p;
  uint64_t gap;
};
__attribute__((noinline)) Gap longGap(const uint8_t* p, const uint8_t* end, uint64_t first) {
  uint64_t gap = first & 0x7fu;
  for (int shift = 7; shift <= 28; shift += 7) {
    if (p >= end) return {nullptr, 0};
    const uint8_t b = *p++;
    gap |= uint64_t(b & 0x7fu) << shift;
    if (!(b & 0x80u)) return {p, gap};
  }
  return {nullptr, 0};
}

/** nibbleIndices without SIMD, in 64-bit arithmetic (the reference; also for sums that 32-bit lanes could wrap). */
uint64_t nibbleIndicesScalar(const uint8_t* p, uint64_t bytes, uint64_t n, uint32_t* idx) {
  const uint64_t total = 2 * bytes;
  if (n > total) return 0;
  uint64_t extra = n, prev = UINT64_MAX;
  for (uint64_t j = 0; j < n; j++) {
    const uint32_t lead = static_cast<uint32_t>((p[j >> 1] >> ((j & 1) * 4)) & 15u);
    uint64_t gap = lead;
    if (lead >= kNibbleDirect) {
      const uint32_t c = lead - kNibbleDirect, k = kNibbleExtra[c];
      if (extra + k > total) return 0;
      gap = kNibbleBase[c] + (nibbleWindow(p, extra) & ((uint64_t(1) << (4 * k)) - 1));
      extra += k;
    }
    prev += gap + 1;
    if (prev >= (uint64_t(1) << 32)) return 0;
    idx[j] = static_cast<uint32_t>(prev);
  }
  return (extra + 1) / 2 == bytes ? prev + 1 : 0;
}

}  // namespace

uint64_t nibbleIndices(const uint8_t* p, uint64_t bytes, uint64_t n, uint32_t* idx) {
#if defined(__SSE4_1__)
  if (!gSimd.load(std::memory_order_relaxed)) return nibbleIndicesScalar(p, bytes, n, idx);
  const uint64_t total = 2 * bytes;
  if (n > total) return 0;
  uint64_t extra = n, longSum = 0;
  const __m128i low4 = _mm_set1_epi8(0x0f), eleven = _mm_set1_epi8(11), one = _mm_set1_epi32(1);
  __m128i carry = _mm_set1_epi32(-1);  // the previous index (-1 before the first), mod 2^32
  alignas(16) uint32_t g[16];
  alignas(16) uint32_t out[16];
  for (uint64_t j = 0; j < n; j += 16) {
    const uint64_t m = n - j < 16 ? n - j : 16;
    // 16 leading nibbles (8 bytes; those past n are ignored) as bytes, in order, widened into g.
    int64_t raw;
    std::memcpy(&raw, p + j / 2, 8);
    const __m128i x = _mm_cvtsi64_si128(raw);
    const __m128i nib = _mm_unpacklo_epi8(_mm_and_si128(x, low4), _mm_and_si128(_mm_srli_epi16(x, 4), low4));
    _mm_store_si128(reinterpret_cast<__m128i*>(g), _mm_cvtepu8_epi32(nib));
    _mm_store_si128(reinterpret_cast<__m128i*>(g + 4), _mm_cvtepu8_epi32(_mm_srli_si128(nib, 4)));
    _mm_store_si128(reinterpret_cast<__m128i*>(g + 8), _mm_cvtepu8_epi32(_mm_srli_si128(nib, 8)));
    _mm_store_si128(reinterpret_cast<__m128i*>(g + 12), _mm_cvtepu8_epi32(_mm_srli_si128(nib, 12)));
    uint32_t longs = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpgt_epi8(nib, eleven)));
    if (m < 16) longs &= (1u << m) - 1;
    for (; longs; longs &= longs - 1) {
      const int k = __builtin_ctz(longs);
      const uint32_t c = g[k] - kNibbleDirect, e = kNibbleExtra[c];
      const uint64_t gap = kNibbleBase[c] + (nibbleWindow(p, extra) & kNibbleMask[c]);
      extra += e;
      longSum += gap;
      g[k] = static_cast<uint32_t>(gap);
      if (__builtin_expect(extra > total, 0)) return 0;  // (the load above stayed within 8 bytes of the end: padding)
    }
    // Prefix sums of (gap + 1), four lanes at a time, carried from lane to lane (as the postings' u16 gaps).
    for (int q = 0; q < 16; q += 4) {
      __m128i y = _mm_add_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(g + q)), one);
      y = _mm_add_epi32(y, _mm_slli_si128(y, 4));
      y = _mm_add_epi32(y, _mm_slli_si128(y, 8));
      y = _mm_add_epi32(y, carry);
      if (m == 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(idx + j + q), y);
      else _mm_store_si128(reinterpret_cast<__m128i*>(out + q), y);
      carry = _mm_shuffle_epi32(y, 0xff);
    }
    if (m < 16) std::memcpy(idx + j, out, 4 * m);  // the last group (entries past n are not the caller's)
  }
  if ((extra + 1) / 2 != bytes) return 0;
  // The lanes are mod 2^32: the sum cannot wrap when the long gaps and at most 12 per entry stay below 2^32;
  // otherwise (huge widths or damage) the scalar path decides.
  if (longSum + 12 * n >= (uint64_t(1) << 32)) return nibbleIndicesScalar(p, bytes, n, idx);
  return n > 0 ? uint64_t(idx[n - 1]) + 1 : 0;
#else
  return nibbleIndicesScalar(p, bytes, n, idx);
#endif
}

void halvesToFloatsScalar(const uint16_t* h, float* out, size_t n) {
  for (size_t j = 0; j < n; j++) out[j] = halfToFloat(h[j]);
}

void halvesToFloats(const uint16_t* h, float* out, size_t n) {
#if SCDV_X86
  if (gSimd.load(std::memory_order_relaxed)) return halvesToFloatsF16C(h, out, n);
#endif
  halvesToFloatsScalar(h, out, n);
}

void codes12ToFloats(const uint8_t* base, uint64_t first, float* out, size_t n) {
  // Sign-extends a 12-bit field held in the low bits.
  auto sx = [](uint32_t u) { return float(int32_t(u << 20) >> 20); };
  size_t j = 0;
  const uint8_t* p = base + (3 * first) / 2;
  if ((first & 1) && n > 0) { out[j++] = sx((uint32_t(p[0]) >> 4) | (uint32_t(p[1]) << 4)); p += 2; }
#if defined(__SSE4_1__)
  // Eight codes (12 bytes, loaded exactly: no read past the document) at a time: each 16-bit lane gets the two
  // bytes holding its code; even lanes shift their code to the top (times 16), and an arithmetic shift by 4
  // sign-extends both kinds. Integers convert exactly, so the scalar loop below gives the same bits.
  const __m128i pick = _mm_setr_epi8(0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 7, 8, 9, 10, 10, 11);
  const __m128i lift = _mm_setr_epi16(16, 1, 16, 1, 16, 1, 16, 1);
  for (; j + 8 <= n; j += 8, p += 12) {
    __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    int32_t hi;
    std::memcpy(&hi, p + 8, 4);
    x = _mm_insert_epi32(x, hi, 2);
    x = _mm_srai_epi16(_mm_mullo_epi16(_mm_shuffle_epi8(x, pick), lift), 4);
    _mm_storeu_ps(out + j, _mm_cvtepi32_ps(_mm_cvtepi16_epi32(x)));
    _mm_storeu_ps(out + j + 4, _mm_cvtepi32_ps(_mm_cvtepi16_epi32(_mm_srli_si128(x, 8))));
  }
#endif
  // Whole pairs: three bytes, two codes.
  for (; j + 2 <= n; j += 2, p += 3) {
    const uint32_t b0 = p[0], b1 = p[1], b2 = p[2];
    out[j] = sx(b0 | ((b1 & 0xfu) << 8));
    out[j + 1] = sx((b1 >> 4) | (b2 << 4));
  }
  if (j < n) out[j] = sx(uint32_t(p[0]) | ((uint32_t(p[1]) & 0xfu) << 8));
}

namespace {
inline float code11(const uint8_t* base, uint64_t e) { return float(codeAt(base, e)); }
}  // namespace

void codesToFloatsScalar(const uint8_t* base, uint64_t first, float* out, size_t n) {
  for (size_t j = 0; j < n; j++) out[j] = code11(base, first + j);
}

void codesToFloats(const uint8_t* base, uint64_t first, float* out, size_t n) {
  size_t j = 0;
#if defined(__SSE4_1__)
  // Scalar up to an entry that starts a byte (a multiple of 8), then eight codes (11 bytes; 16 loaded: the
  // section is padded) at a time: each 32-bit lane gets the three bytes holding its code, a multiply shifts the
  // code to the top of the lane and an arithmetic shift sign-extends it. Integers convert exactly: the scalar
  // path gives the same bits.
  for (; j < n && ((first + j) & 7) != 0; j++) out[j] = code11(base, first + j);
  const __m128i pickLo = _mm_setr_epi8(0, 1, 2, -1, 1, 2, 3, -1, 2, 3, 4, -1, 4, 5, 6, -1);
  const __m128i pickHi = _mm_setr_epi8(5, 6, 7, -1, 6, 7, 8, -1, 8, 9, 10, -1, 9, 10, 11, -1);
  const __m128i liftLo = _mm_setr_epi32(1 << 21, 1 << 18, 1 << 15, 1 << 20);  // 2^(21 - bit offset in the lane)
  const __m128i liftHi = _mm_setr_epi32(1 << 17, 1 << 14, 1 << 19, 1 << 16);
  for (; j + 8 <= n; j += 8) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + 11 * ((first + j) >> 3)));
    const __m128i lo = _mm_srai_epi32(_mm_mullo_epi32(_mm_shuffle_epi8(x, pickLo), liftLo), 21);
    const __m128i hi = _mm_srai_epi32(_mm_mullo_epi32(_mm_shuffle_epi8(x, pickHi), liftHi), 21);
    _mm_storeu_ps(out + j, _mm_cvtepi32_ps(lo));
    _mm_storeu_ps(out + j + 4, _mm_cvtepi32_ps(hi));
  }
#endif
  for (; j < n; j++) out[j] = code11(base, first + j);
}

bool simdEnabled() { return gSimd.load(); }

bool setSimd(bool on) {
  gSimd.store(on && cpuHasF16C());
  return gSimd.load();
}

void Segment::forward(uint32_t d, uint32_t* idx, float* val) const {
  const uint64_t n = fwdoff_[d + 1] - fwdoff_[d];
  const uint8_t* p = fwdidx_ + fwdidxoff_[d];
  const uint8_t* const end = fwdidx_ + fwdidxoff_[d + 1];
  auto damaged = [&]() {
    return StoreError("segment " + path() + " is damaged: forward index of document " + std::to_string(d), "CORRUPT");
  };
  uint64_t prev = UINT64_MAX;  // index of the previous entry; the first gap counts from -1
  if (version_ >= 4) {
    const uint64_t last = nibbleIndices(p, uint64_t(end - p), n, idx);
    if (n > 0 && (last == 0 || last > h_->width)) throw damaged();
    if (n == 0 && end != p) throw damaged();
  } else {
    // Every entry takes at least one byte (checked when the segment was opened: bytes >= n), so one-byte gaps
    // need no bounds check; a longer one is checked byte by byte and must leave a byte for each entry after it.
    for (uint64_t j = 0; j < n; j++) {
      uint64_t gap = *p++;
      if (gap >= 0x80u) {
        gap &= 0x7fu;
        for (int shift = 7;; shift += 7) {
          if (p >= end || shift > 28) throw damaged();
          const uint8_t b = *p++;
          gap |= uint64_t(b & 0x7fu) << shift;
          if (!(b & 0x80u)) break;
        }
        if (uint64_t(end - p) < n - j - 1) throw damaged();
      }
      prev += gap + 1;
      idx[j] = static_cast<uint32_t>(prev);
    }
    // Indices increase, so the last one is the largest: one check for all (and no wrap: gaps are < 2^35).
    if (p != end || (n > 0 && prev >= h_->width)) throw damaged();
  }
  valuesOf(d, val);
  const float unit = valueUnit(d);
  for (uint64_t j = 0; j < n; j++) val[j] *= unit;
}

void Segment::valuesOf(uint32_t d, float* out) const {
  const uint64_t n = fwdoff_[d + 1] - fwdoff_[d];
  if (version_ == 2) halvesToFloats(reinterpret_cast<const uint16_t*>(fwdval_) + fwdoff_[d], out, n);
  else if (version_ == 3) codes12ToFloats(fwdval_, fwdoff_[d], out, n);
  else codesToFloats(fwdval_, fwdoff_[d], out, n);
}

double Segment::dotForward(uint32_t d, const float* qd, float* buf) const {
  const float sc = valueUnit(d);
  const uint64_t n = fwdoff_[d + 1] - fwdoff_[d];
  const uint64_t n4 = n & ~uint64_t(3);  // dotDense: lanes j mod 4 up to a multiple of 4, the rest into lane 0
  if (!(sc >= 0x1p-100f)) {
    // Tiny scales: code * scale may round in float32, so score the stored values themselves.
    thread_local std::vector<uint32_t> idx;
    if (idx.size() < n) idx.resize(n);
    forward(d, idx.data(), buf);
    double a[4] = {0, 0, 0, 0};
    for (uint64_t j = 0; j < n; j++) a[j < n4 ? j & 3 : 0] += double(qd[idx[j]]) * double(buf[j]);
    return (a[0] + a[1]) + (a[2] + a[3]);
  }
  // code * scale is exact here, so sum(q * code) * scale has the bits of sum(q * (code * scale)) (the MemDoc path).
  if (version_ >= 4) {
    double s;
    if (dotNibblesFused(fwdidx_ + fwdidxoff_[d], fwdidxoff_[d + 1] - fwdidxoff_[d], fwdval_, fwdoff_[d], n, qd, h_->width, &s)) {
      return s * double(sc);
    }
    valuesOf(d, buf);
    return dotNibbles(d, qd, buf) * double(sc);
  }
  valuesOf(d, buf);
  const uint8_t* p = fwdidx_ + fwdidxoff_[d];
  const uint8_t* const end = fwdidx_ + fwdidxoff_[d + 1];
  const uint64_t width = h_->width;
  bool bad = false;
  uint64_t prev = UINT64_MAX;
  // One-byte gaps inline; a longer one (and damage) out of line. Every entry has at least one byte (checked
  // at open), and after a long gap at least one byte must remain per entry left.
  auto next = [&](uint64_t j) -> uint64_t {
    uint64_t gap = *p++;
    if (__builtin_expect(gap >= 0x80u, 0)) {
      const Gap g = longGap(p, end, gap);
      if (!g.p || uint64_t(end - g.p) < n - j - 1) { bad = true; p = end - (n - j - 1); gap = 0; }
      else { p = g.p; gap = g.gap; }
    }
    prev += gap + 1;
    if (__builtin_expect(prev >= width, 0)) { bad = true; prev = 0; }
    return prev;
  };
  double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  uint64_t j = 0;
  for (; j < n4; j += 4) {
    // Four one-byte gaps (the common case): one test, and one width check (the last index is the largest).
    // At least n - j >= 4 bytes remain here (one per entry left), so the 4-byte load stays in the document.
    uint32_t w4;
    std::memcpy(&w4, p, 4);
    if ((w4 & 0x80808080u) == 0) {
      const uint64_t i0 = prev + (w4 & 0xffu) + 1, i1 = i0 + ((w4 >> 8) & 0xffu) + 1;
      const uint64_t i2 = i1 + ((w4 >> 16) & 0xffu) + 1, i3 = i2 + (w4 >> 24) + 1;
      if (__builtin_expect(i3 < width, 1)) {
        p += 4;
        prev = i3;
        a0 += double(qd[i0]) * double(buf[j]);
        a1 += double(qd[i1]) * double(buf[j + 1]);
        a2 += double(qd[i2]) * double(buf[j + 2]);
        a3 += double(qd[i3]) * double(buf[j + 3]);
        continue;
      }
    }
    a0 += double(qd[next(j)]) * double(buf[j]);
    a1 += double(qd[next(j + 1)]) * double(buf[j + 1]);
    a2 += double(qd[next(j + 2)]) * double(buf[j + 2]);
    a3 += double(qd[next(j + 3)]) * double(buf[j + 3]);
  }
  for (; j < n; j++) a0 += double(qd[next(j)]) * double(buf[j]);
  if (bad || p != end) throw StoreError("segment " + path() + " is damaged: forward index of document " + std::to_string(d), "CORRUPT");
  return ((a0 + a1) + (a2 + a3)) * double(sc);
}

double Segment::dotNibbles(uint32_t d, const float* qd, const float* codes) const {
  const uint64_t n = fwdoff_[d + 1] - fwdoff_[d];
  thread_local std::vector<uint32_t> idx;
  if (idx.size() < n) idx.resize(n);
  uint32_t* const ix = idx.data();
  const uint64_t last = nibbleIndices(fwdidx_ + fwdidxoff_[d], fwdidxoff_[d + 1] - fwdidxoff_[d], n, ix);
  if (n > 0 && (last == 0 || last > h_->width)) {
    throw StoreError("segment " + path() + " is damaged: forward index of document " + std::to_string(d), "CORRUPT");
  }
  // dotDense's lanes: j mod 4 up to a multiple of 4, the rest into lane 0 (two lanes per SSE2 register: the same
  // products and sums in the same order, so the same bits).
  const uint64_t n4 = n & ~uint64_t(3);
  uint64_t j = 0;
#if defined(__SSE2__)
  __m128d s01 = _mm_setzero_pd(), s23 = _mm_setzero_pd();
  for (; j < n4; j += 4) {
    const __m128 q4 = _mm_setr_ps(qd[ix[j]], qd[ix[j + 1]], qd[ix[j + 2]], qd[ix[j + 3]]);
    const __m128 c4 = _mm_loadu_ps(codes + j);
    s01 = _mm_add_pd(s01, _mm_mul_pd(_mm_cvtps_pd(q4), _mm_cvtps_pd(c4)));
    s23 = _mm_add_pd(s23, _mm_mul_pd(_mm_cvtps_pd(_mm_movehl_ps(q4, q4)), _mm_cvtps_pd(_mm_movehl_ps(c4, c4))));
  }
  double a0 = _mm_cvtsd_f64(s01), a1 = _mm_cvtsd_f64(_mm_unpackhi_pd(s01, s01));
  const double a2 = _mm_cvtsd_f64(s23), a3 = _mm_cvtsd_f64(_mm_unpackhi_pd(s23, s23));
#else
  double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (; j < n4; j += 4) {
    a0 += double(qd[ix[j]]) * double(codes[j]);
    a1 += double(qd[ix[j + 1]]) * double(codes[j + 1]);
    a2 += double(qd[ix[j + 2]]) * double(codes[j + 2]);
    a3 += double(qd[ix[j + 3]]) * double(codes[j + 3]);
  }
#endif
  for (; j < n; j++) a0 += double(qd[ix[j]]) * double(codes[j]);
  return (a0 + a1) + (a2 + a3);
}

void Segment::prefetchForwardOffsets(uint32_t d) const {
  __builtin_prefetch(fwdoff_ + d);
  __builtin_prefetch(fwdidxoff_ + d);
  __builtin_prefetch(fwdscale_ + d);
}

void Segment::prefetchForward(uint32_t d) const {
  const uint8_t* a = fwdidx_ + fwdidxoff_[d];
  for (uint64_t o = 0; o < fwdidxoff_[d + 1] - fwdidxoff_[d]; o += 64) __builtin_prefetch(a + o);
  const uint64_t b0 = version_ == 2 ? 2 * fwdoff_[d] : version_ == 3 ? (3 * fwdoff_[d]) / 2 : (11 * fwdoff_[d]) / 8;
  const uint64_t b1 = version_ == 2 ? 2 * fwdoff_[d + 1] : version_ == 3 ? code12Bytes(fwdoff_[d + 1]) : codeBytes(fwdoff_[d + 1]);
  for (uint64_t o = b0; o < b1; o += 64) __builtin_prefetch(fwdval_ + o);
}

}  // namespace scdv
