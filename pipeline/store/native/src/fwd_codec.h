// The forward index's compact coding (segment format 2): what a stored value is, and how a document's
// entries are packed.
//
// Values: each document has a scale, the smallest power of two >= its largest |value|, and each value is kept
// as the IEEE float16 nearest to value / scale (round to nearest, ties to even). The stored value is
// float16 * scale, an exact float32: |stored - value| <= 2^-11 |value| + 2^-25 scale, so a dot product
// with a query moves by at most 2^-11 * sum |q_i v_i| + 2^-24 max|v| * sum |q_i| (about 5e-4 for unit
// vectors). Coding a stored value again gives the same bits (merges lose nothing more). The WAL tail's
// documents are held as stored values too, so a document scores the same before and after a flush.
// Indices: per document, the gaps (index - previous index - 1, the first index as is) as LEB128 varints.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace scdv {

/** float32 -> float16 bits, round to nearest even. Finite inputs with |f| < 65520 (callers pass |f| <= 2). */
inline uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504: infinity
  if (x < 0x38800000u) {                                                // below 2^-14: subnormal half
    if (x < 0x33000000u) return static_cast<uint16_t>(sign);            // below 2^-25 (2^-25 itself ties to 0)
    const uint32_t e = x >> 23, m = (x & 0x7fffffu) | 0x800000u, shift = 126 - e;  // shift in [14, 24]
    uint32_t h = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (h & 1u))) h++;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (x - 0x38000000u) >> 13;  // rebias the exponent (127 -> 15), keep 10 mantissa bits
  const uint32_t rem = x & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;  // a carry into the exponent is the right result
  return static_cast<uint16_t>(sign | h);
}

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

/** A document's scale: the smallest power of two >= max |v| (1 when every value is 0), at most 2^127. */
inline float docScale(const float* v, size_t n) {
  float mx = 0;
  for (size_t j = 0; j < n; j++) mx = std::fmax(mx, std::fabs(v[j]));
  if (!(mx > 0)) return 1.0f;
  int e;
  const float m = std::frexp(mx, &e);  // mx = m * 2^e, m in [0.5, 1)
  if (m == 0.5f) e--;
  return std::ldexp(1.0f, e > 127 ? 127 : e);
}

/**
 * The float16 code of v in a document of this scale: float16(v / scale). v / scale <= 1 except when the scale
 * is capped (values above 2^127): there the code is kept below 2 (0x3fff), so that code * scale stays finite.
 */
inline uint16_t encodeValue(float v, float scale) {
  const uint16_t h = floatToHalf(v / scale);
  return (h & 0x7fffu) >= 0x4000u ? static_cast<uint16_t>((h & 0x8000u) | 0x3fffu) : h;
}

/** The value as stored: the code times the scale. */
inline float storedValue(float v, float scale) { return halfToFloat(encodeValue(v, scale)) * scale; }

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
