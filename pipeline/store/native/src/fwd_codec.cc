// The forward index's decoding (fwd_codec.h): float16 values with a run-time choice between F16C and scalar
// code (same bits), and a document's varint index gaps.
#include "fwd_codec.h"

#include <atomic>
#include <string>

#include "segment.h"
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define SCDV_X86 1
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
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
}
#else
bool cpuHasF16C() { return false; }
#endif

std::atomic<bool> gSimd{cpuHasF16C()};

}  // namespace

void halvesToFloatsScalar(const uint16_t* h, float* out, size_t n) {
  for (size_t j = 0; j < n; j++) out[j] = halfToFloat(h[j]);
}

void halvesToFloats(const uint16_t* h, float* out, size_t n) {
#if SCDV_X86
  if (gSimd.load(std::memory_order_relaxed)) return halvesToFloatsF16C(h, out, n);
#endif
  halvesToFloatsScalar(h, out, n);
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
  const uint32_t width = h_->width;
  uint64_t prev = 0;
  for (uint64_t j = 0; j < n; j++) {
    uint64_t gap = 0;
    int shift = 0;
    for (;;) {
      if (p >= end || shift > 28) throw StoreError("segment " + path() + " is damaged: forward index of document " + std::to_string(d), "CORRUPT");
      const uint8_t b = *p++;
      gap |= uint64_t(b & 0x7fu) << shift;
      if (!(b & 0x80u)) break;
      shift += 7;
    }
    prev = j == 0 ? gap : prev + gap + 1;
    if (prev >= width) throw StoreError("segment " + path() + " is damaged: forward index of document " + std::to_string(d), "CORRUPT");
    idx[j] = static_cast<uint32_t>(prev);
  }
  if (p != end) throw StoreError("segment " + path() + " is damaged: forward index of document " + std::to_string(d), "CORRUPT");
  halvesToFloats(fwdval_ + fwdoff_[d], val, n);
  const float sc = fwdscale_[d];
  for (uint64_t j = 0; j < n; j++) val[j] *= sc;
}

void Segment::prefetchForward(uint32_t d) const {
  const uint8_t* a = fwdidx_ + fwdidxoff_[d];
  for (uint64_t o = 0; o < fwdidxoff_[d + 1] - fwdidxoff_[d]; o += 64) __builtin_prefetch(a + o);
  const char* v = reinterpret_cast<const char*>(fwdval_ + fwdoff_[d]);
  for (uint64_t o = 0; o < 2 * (fwdoff_[d + 1] - fwdoff_[d]); o += 64) __builtin_prefetch(v + o);
  __builtin_prefetch(fwdscale_ + d);
}

}  // namespace scdv
