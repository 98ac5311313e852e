// The forward index's compact coding: what a stored value is, and how a document's entries are packed.
//
// Values (segment format 3): each document has a unit, a power of two: 2^-11 times the smallest power of two
// above its largest |value| (docUnit). Each value is kept as a 12-bit signed code, nearest-even(value / unit)
// clamped to [-2047, 2047]; two codes fill three bytes (entry j of the segment at bit 12 j). The stored value
// is code * unit, an exact float32: |stored - value| <= unit / 2, or <= unit for a value within half a unit of
// 2048 units (clamped), and unit <= 2^-10 max |value|. So a dot product with a query moves by at most
// unit * sum of |q_i| over the document's non-zeros (measured on 100k real hybrid vectors in BENCHMARKS.md).
// Coding a stored value again gives the same code (merges lose nothing more). The WAL tail's documents are
// held as stored values too, so a document scores the same before and after a flush.
// Format 2 (still read; rewritten as format 3 when merged) kept float16(value / scale) with scale = 2048 units
// (at most 2^127), 2 bytes per value; FWDSCALE holds that scale there and the unit in format 3.
// Indices: per document, the gaps (index - previous index - 1, the first index as is) as LEB128 varints.
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

/** Largest |code| of a 12-bit value (format 3). */
constexpr int kCodeMax = 2047;

/**
 * A document's unit (format 3): 2^-11 times the smallest power of two above max |v| (strictly: a stored maximum,
 * at least 1024 units and at most 2047, gives the same unit again, so coding stored values is idempotent), at
 * least 2^-149 (float32's smallest step, where every value is a whole number of units); 2^-11 when all are 0.
 */
inline float docUnit(const float* v, size_t n) {
  float mx = 0;
  for (size_t j = 0; j < n; j++) mx = std::fmax(mx, std::fabs(v[j]));
  if (!(mx > 0)) return 0x1p-11f;
  int e;
  std::frexp(mx, &e);  // mx = m * 2^e, m in [0.5, 1): 2^e is the smallest power of two above mx; e <= 128
  return std::ldexp(1.0f, e - 11 < -149 ? -149 : e - 11);
}

/** The 12-bit code of v in a document of this unit: nearest-even(v / unit), clamped to [-2047, 2047]. */
inline int32_t encodeCode(float v, float unit) {
  const float c = std::nearbyint(v / unit);  // v / unit: exact scaling by a power of two (or below 1/2 anyway)
  return c > float(kCodeMax) ? kCodeMax : c < -float(kCodeMax) ? -kCodeMax : static_cast<int32_t>(c);
}

/** The value as stored: the code times the unit (exact in float32). */
inline float storedValue(float v, float unit) { return float(encodeCode(v, unit)) * unit; }

/** Bytes of n 12-bit codes. */
inline uint64_t codeBytes(uint64_t n) { return (3 * n + 1) / 2; }

/** Writes code as entry j of a packed 12-bit array (the caller zeroed its bytes). */
inline void putCode(uint8_t* base, uint64_t j, int32_t code) {
  const uint32_t u = uint32_t(code) & 0xfffu;
  uint8_t* p = base + (3 * j) / 2;
  if (j & 1) { p[0] |= static_cast<uint8_t>(u << 4); p[1] = static_cast<uint8_t>(u >> 4); }
  else { p[0] = static_cast<uint8_t>(u); p[1] |= static_cast<uint8_t>(u >> 8); }
}

/** Entries first..first+n of a packed 12-bit array as floats (the codes, not yet times the unit). */
void codesToFloats(const uint8_t* base, uint64_t first, float* out, size_t n);

/** Appends gap as a LEB128 varint at p; returns the end. */
inline uint8_t* putVarint(uint8_t* p, uint32_t gap) {
  while (gap >= 0x80u) { *p++ = static_cast<uint8_t>(gap | 0x80u); gap >>= 7; }
  *p++ = static_cast<uint8_t>(gap);
  return p;
}

/** Runtime-dispatched float16 -> float32 of n values: F16C (AVX2 class CPUs) when present, else scalar; same bits. */
void halvesToFloats(const uint16_t* h, float* out, size_t n);
/** The scalar path (tests compare it with the dispatched one). */
void halvesToFloatsScalar(const uint16_t* h, float* out, size_t n);
/** Whether the F16C path is in use; tests may turn it off (and on again, when the CPU has it). Returns the new state. */
bool simdEnabled();
bool setSimd(bool on);

}  // namespace scdv
