// The forward index's compact coding: what a stored value is, and how a document's entries are packed.
//
// Values (segment format 4): each document has a unit, a power of two: 2^-10 times the smallest power of two
// above its largest |value| (docUnit). Each value is kept as an 11-bit signed code, nearest-even(value / unit)
// clamped to [-1023, 1023]; the codes are packed (entry j of the segment at bit 11 j). The stored value
// is code * unit, an exact float32: |stored - value| <= unit / 2, or <= unit for a value within half a unit of
// 1024 units (clamped), and unit <= 2^-9 max |value|. So a dot product with a query moves by at most
// unit * sum of |q_i| over the document's non-zeros (measured on 100k real hybrid vectors in BENCHMARKS.md).
// Coding a stored value again gives the same code (merges lose nothing more). The WAL tail's documents are
// held as stored values too, so a document scores the same before and after a flush.
// Format 3 (still read; rewritten as format 4 when merged) kept 12-bit codes of a unit twice as fine (two codes
// in three bytes); format 2 kept float16(value / scale) with scale = 2048 of format 3's units (at most 2^127),
// 2 bytes per value; FWDSCALE holds that scale there and the unit in formats 3 and 4.
// Indices (format 4): per document, the gaps (index - previous index - 1, the first index as is) as nibbles, low
// nibble of each byte first, the document's nibbles padded to a whole byte. First one nibble per entry: a gap below
// 12 as is, else 12, 13, 14 or 15, saying that 1, 2, 3 or 8 more nibbles (little-endian) hold gap - 12, gap - 28,
// gap - 284, or the gap itself (kNibbleBase); those "extra" nibbles follow the n leading ones, in entry order (so
// the leading nibbles are decoded 16 at a time with SIMD, then the long gaps patched in: like the postings' patched
// gaps, posting_codec.h). 0.72 bytes per non-zero on the benchmark's
// hybrid vectors, against 1.09 for the LEB128 varints of formats 2 and 3 (still read).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace scdv {

/** float16 bits -> float32 (exact). */
inline float halfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  uint32_t x;
  if (e == 0) {
    const float f = float(m) * 0x1p-24f;  // zero or subnormal: exact
    std::memcpy(&x, &f, 4);
    x |= sign;
  } else if (e == 31) {
    x = sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u);  // NaNs quietened, as F16C does (never stored)
  } else {
    x = sign | ((e + 112) << 23) | (m << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

/** Largest |code| of an 11-bit value (format 4). */
constexpr int kCodeMax = 1023;

/**
 * A document's unit (format 4): 2^-10 times the smallest power of two above max |v| (strictly: a stored maximum,
 * at least 512 units and at most 1023, gives the same unit again, so coding stored values is idempotent), at
 * least 2^-149 (float32's smallest step, where every value is a whole number of units); 2^-10 when all are 0.
 */
inline float docUnit(const float* v, size_t n) {
  float mx = 0;
  for (size_t j = 0; j < n; j++) mx = std::fmax(mx, std::fabs(v[j]));
  if (!(mx > 0)) return 0x1p-10f;
  int e;
  std::frexp(mx, &e);  // mx = m * 2^e, m in [0.5, 1): 2^e is the smallest power of two above mx; e <= 128
  return std::ldexp(1.0f, e - 10 < -149 ? -149 : e - 10);
}

/** The 11-bit code of v in a document of this unit: nearest-even(v / unit), clamped to [-1023, 1023]. */
inline int32_t encodeCode(float v, float unit) {
  const float c = std::nearbyint(v / unit);  // v / unit: exact scaling by a power of two (or below 1/2 anyway)
  return c > float(kCodeMax) ? kCodeMax : c < -float(kCodeMax) ? -kCodeMax : static_cast<int32_t>(c);
}

/** The value as stored: the code times the unit (exact in float32). */
inline float storedValue(float v, float unit) { return float(encodeCode(v, unit)) * unit; }

/** Bytes of n 11-bit codes (format 4), and of n 12-bit codes (format 3). */
inline uint64_t codeBytes(uint64_t n) { return (11 * n + 7) / 8; }
inline uint64_t code12Bytes(uint64_t n) { return (3 * n + 1) / 2; }
/** Zero bytes after FWDVAL and FWDIDX in format 4: decoders load 8 or 16 bytes at a time. */
constexpr uint64_t kFwdPad = 16;

/** Writes code as entry j of a packed 11-bit array (the caller zeroed its bytes). */
inline void putCode(uint8_t* base, uint64_t j, int32_t code) {
  const uint64_t bit = 11 * j;
  const uint32_t u = (uint32_t(code) & 0x7ffu) << (bit & 7);
  uint8_t* p = base + (bit >> 3);
  p[0] |= static_cast<uint8_t>(u);
  p[1] |= static_cast<uint8_t>(u >> 8);
  if (u >> 16) p[2] |= static_cast<uint8_t>(u >> 16);
}

/** Entry e of a packed 11-bit array, sign-extended (reads 4 bytes: the section is padded, kFwdPad). */
inline int32_t codeAt(const uint8_t* base, uint64_t e) {
  const uint64_t bit = 11 * e;
  uint32_t u;
  std::memcpy(&u, base + (bit >> 3), 4);
  return int32_t(u << (21 - (bit & 7))) >> 21;
}

/** Entries first..first+n of a packed 11-bit array (format 4) as floats (the codes, not yet times the unit). */
void codesToFloats(const uint8_t* base, uint64_t first, float* out, size_t n);
/** The scalar path of codesToFloats (tests compare the two; the same bits). */
void codesToFloatsScalar(const uint8_t* base, uint64_t first, float* out, size_t n);
/** The same for a packed 12-bit array (format 3). */
void codes12ToFloats(const uint8_t* base, uint64_t first, float* out, size_t n);

/** Appends gap as a LEB128 varint at p; returns the end (formats 2 and 3; tests write such gaps). */
inline uint8_t* putVarint(uint8_t* p, uint32_t gap) {
  while (gap >= 0x80u) { *p++ = static_cast<uint8_t>(gap | 0x80u); gap >>= 7; }
  *p++ = static_cast<uint8_t>(gap);
  return p;
}

/** Nibble gap classes (format 4): a first nibble 12 + c is followed by kNibbleExtra[c] nibbles of gap - kNibbleBase[c]. */
constexpr uint32_t kNibbleDirect = 12;
constexpr uint32_t kNibbleExtra[4] = {1, 2, 3, 8};
constexpr uint64_t kNibbleBase[4] = {12, 28, 284, 0};
constexpr uint64_t kNibbleMask[4] = {0xf, 0xff, 0xfff, 0xffffffffull};
/** 15 or 16 nibbles of a stream from nibble pos on (an 8-byte load: the section is padded, kFwdPad). */
inline uint64_t nibbleWindow(const uint8_t* p, uint64_t pos) {
  uint64_t w;
  std::memcpy(&w, p + (pos >> 1), 8);
  return w >> ((pos & 1) * 4);
}
/** Sets nibble pos of out (zeroed) to v. */
inline void putNibble(uint8_t* out, uint64_t pos, uint32_t v) { out[pos >> 1] |= static_cast<uint8_t>((v & 15u) << ((pos & 1) * 4)); }
/**
 * Writes the n gaps of a document (format 4) into out (zeroed, room for (9 n + 1) / 2 bytes): the leading nibble
 * of each, then the extra nibbles of the long ones. Returns the nibbles written.
 */
inline uint64_t putNibbleGaps(uint8_t* out, const uint32_t* gaps, uint64_t n) {
  uint64_t extra = n;
  for (uint64_t j = 0; j < n; j++) {
    const uint32_t gap = gaps[j];
    if (gap < kNibbleDirect) { putNibble(out, j, gap); continue; }
    const uint32_t c = gap < 28 ? 0 : gap < 284 ? 1 : gap < 4380 ? 2 : 3;
    putNibble(out, j, kNibbleDirect + c);
    uint64_t rest = gap - kNibbleBase[c];
    for (uint32_t k = 0; k < kNibbleExtra[c]; k++, rest >>= 4) putNibble(out, extra++, static_cast<uint32_t>(rest));
  }
  return extra;
}
/**
 * A document's n gaps (nibbles at p, bytes of them) as indices into idx[0..n). Returns the last (largest) index
 * + 1, or 0 when the nibbles are damaged (not exactly n gaps, or indices past 2^32); the caller checks the width.
 * SSE4.1 (16 leading nibbles at a time, long gaps patched in, prefix sums) unless simdEnabled() is off: the same
 * indices. Loads stay within the document's bytes and the section's padding (kFwdPad).
 */
uint64_t nibbleIndices(const uint8_t* p, uint64_t bytes, uint64_t n, uint32_t* idx);

/**
 * Format 4's rescoring in one pass (fwd_dot.cc, AVX2 + FMA when simdEnabled()): a document's n nibble gaps (at
 * nibbles, bytes of them) and its 11-bit codes (entries first.. of the packed array codes) dotted with the dense
 * query qd, the products summed in dotDense's lanes and order: *out gets the same bits as nibbleIndices, then
 * codesToFloats, then the sum in those lanes (not yet times the unit). Returns false, with nothing read past the
 * query's width, when the SIMD path is off or the bytes are not plainly well-formed (then the caller's reference
 * path decodes the document again and reports the damage).
 */
bool dotNibblesFused(const uint8_t* nibbles, uint64_t bytes, const uint8_t* codes, uint64_t first, uint64_t n,
                     const float* qd, uint64_t width, double* out);

/** Runtime-dispatched float16 -> float32 of n values: F16C (AVX2 class CPUs) when present, else scalar; same bits. */
void halvesToFloats(const uint16_t* h, float* out, size_t n);
/** The scalar path (tests compare it with the dispatched one). */
void halvesToFloatsScalar(const uint16_t* h, float* out, size_t n);
/** Whether the F16C path is in use; tests may turn it off (and on again, when the CPU has it). Returns the new state. */
bool simdEnabled();
bool setSimd(bool on);

}  // namespace scdv
