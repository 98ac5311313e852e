// Immutable segment files: format, builder and the mapped reader.
//
// A segment holds n documents under local numbers 0..n-1, ordered by (published_at, id), so that a time
// range is a contiguous range of local numbers. Layout (little-endian; every section 64-byte aligned;
// the header names each section's offset and length):
//
//   header      SegHeader (CRC-32 protected)
//   IDOFF       u64[n+1]   offsets of the external ids in IDBLOB, local order
//   IDBLOB      UTF-8 ids
//   IDSORT      u32[n]     local numbers in byte order of their ids (binary search by id)
//   TIME        i64[n]     published_at, epoch ms (INT64_MIN = none); non-decreasing
//   SITE, CAT   u32[n]     dictionary codes (0 = none)
//   SITEDICT_OFF/BLOB, SITE_COUNT   sorted site names (code c is entry c-1) and docs per code
//   CATDICT_OFF/BLOB,  CAT_COUNT    the same for categories
//   METAOFF     u64[n+1], METABLOB  the metadata JSON of each document
//   FWDOFF      u64[n+1]   forward index: document d's non-zeros are entries FWDOFF[d]..FWDOFF[d+1]
//   FWDIDX      per document, its index gaps as nibbles (fwd_codec.h), bytes FWDIDXOFF[d]..FWDIDXOFF[d+1]; then
//               kFwdPad zero bytes. Formats 2 and 3: LEB128 varints, no padding.
//   FWDVAL      an 11-bit signed code per non-zero, packed (entry j at bit 11 j; fwd_codec.h), then kFwdPad zero
//               bytes: value ~= code * the document's unit. Format 3: 12-bit codes, two in three bytes; format 2:
//               float16 value / scale (u16 FWDVAL[j]).
//   DIMLISTS    u32[width+1]  posting lists of dim i are LISTS[DIMLISTS[i]..DIMLISTS[i+1])
//   LISTS       ListInfo per posting list. A dim's postings are split into "tiers" by |value|
//               (tier 0 holds the largest magnitudes); each tier is its own list, sorted by local doc.
//   BLOCKS      BlockInfo per block of <= 128 postings of a list, within one window of 65536 local docs
//   PDATA       per block: int8 weights[cnt] (value ~= weight * list scale), then the cnt-1 doc gaps
//               (doc[j] - doc[j-1] - 1) in the layout BlockInfo.bits names (posting_codec.h: none, u8, u16, u32,
//               or format 4's patched u8); 16 zero bytes at the end. Byte-aligned gaps cost a little space
//               against bit-packing but decode with SIMD.
//   FWDIDXOFF   u64[n+1]   byte offsets of the documents' index gaps in FWDIDX
//   FWDSCALE    f32[n]     each document's unit (a power of two; stored value = code * unit). Format 2: its
//                          scale (stored value = float16 * scale)
// Format 2 and 3 segments are read and searched as they are, and rewritten as format 4 when merged.
// Format 1 (u16/u32 indices and f32 values in the forward index, 6 bytes per non-zero instead of ~3.2) is
// refused with FORMAT_UNSUPPORTED: rebuild the collection (scdv index) to convert it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fwd_codec.h"
#include "util.h"

namespace scdv {

enum Section : int {
  S_IDOFF, S_IDBLOB, S_IDSORT, S_TIME, S_SITE, S_CAT,
  S_SITEDICT_OFF, S_SITEDICT_BLOB, S_SITE_COUNT, S_CATDICT_OFF, S_CATDICT_BLOB, S_CAT_COUNT,
  S_METAOFF, S_METABLOB, S_FWDOFF, S_FWDIDX, S_FWDVAL, S_DIMLISTS, S_LISTS, S_BLOCKS, S_PDATA, S_FWDIDXOFF, S_FWDSCALE,
  S_COUNT
};

constexpr uint32_t kSegVersion = 4;
/** The oldest format this build still reads (format 2: float16 forward values; format 3: 12-bit values, varint gaps). */
constexpr uint32_t kSegVersionOldest = 2;
constexpr uint32_t kBlockSize = 128;
constexpr int64_t kNoTime = INT64_MIN;
constexpr int kMaxTiers = 8;
constexpr uint32_t kPdataPad = 16;
/** Posting blocks never cross a multiple of this local doc number, so search can work window by window. */
constexpr uint32_t kWindowDocs = 1u << 16;


struct SegHeader {
  char magic[8];            // "SCDVSEG1"
  uint32_t version;         // kSegVersion (or kSegVersionOldest when read)
  uint32_t headerBytes;     // sizeof(SegHeader)
  uint32_t width;
  uint32_t ndocs;
  uint64_t nnz;
  uint32_t idxBytes;        // 2 or 4 (width <= 65536 or not); format 2 codes indices as varints whatever it is
  uint32_t blockSize;       // 128
  uint32_t nlists;
  uint32_t ntiers;
  uint64_t nblocks;
  uint32_t nsites;
  uint32_t ncats;
  float tierFrac[kMaxTiers];  // cumulative share of a list's postings in tiers 0..t
  uint32_t minTierList;       // lists shorter than this are not split
  uint32_t windowDocs;        // kWindowDocs: no posting block spans two windows of this many local docs
  uint64_t off[S_COUNT];
  uint64_t len[S_COUNT];
  uint64_t fileBytes;
  uint32_t reserved[13];
  uint32_t crc;             // CRC-32 of every byte before this field
};

struct ListInfo {
  uint32_t dim;
  uint32_t tier;
  uint32_t count;     // postings
  uint32_t nblocks;
  float scale;        // value ~= int8 weight * scale; |error| <= scale / 2
  float maxv;         // exact max / min of the values in the list
  float minv;
  float energy;       // sum of squared values
  uint64_t block0;    // first BlockInfo
  uint64_t dataOff;   // byte offset of the list's first block in PDATA
};
static_assert(sizeof(ListInfo) == 48, "ListInfo layout");

struct BlockInfo {
  uint32_t first;     // first and last local doc of the block
  uint32_t last;
  uint32_t dataRel;   // offset of the block's bytes from the list's dataOff
  int8_t qmax;        // ceil(max value / scale), floor(min value / scale): outward-rounded bounds
  int8_t qmin;
  uint8_t bits;       // gap layout (posting_codec.h): 0, 8, 16, 32 or kGapsPatched
  uint8_t cntm1;      // postings in the block minus 1
};
static_assert(sizeof(BlockInfo) == 16, "BlockInfo layout");

/** A mapped, validated segment file. Thread-safe for reading. */
class Segment {
 public:
  explicit Segment(const std::string& path);
  const SegHeader& h() const { return *h_; }
  const std::string& path() const { return map_.path(); }
  uint32_t ndocs() const { return h_->ndocs; }
  uint32_t width() const { return h_->width; }
  uint64_t nnz() const { return h_->nnz; }
  uint64_t fileBytes() const { return map_.size(); }
  /** Bytes of the forward index (entry and byte offsets, index gaps, value codes, units). */
  uint64_t forwardBytes() const {
    return h_->len[S_FWDOFF] + h_->len[S_FWDIDXOFF] + h_->len[S_FWDIDX] + h_->len[S_FWDVAL] + h_->len[S_FWDSCALE];
  }
  uint64_t postingsBytes() const { return h_->len[S_DIMLISTS] + h_->len[S_LISTS] + h_->len[S_BLOCKS] + h_->len[S_PDATA]; }

  std::string_view id(uint32_t d) const { return str(S_IDBLOB, idoff_[d], idoff_[d + 1]); }
  /** Local number of an id, or -1. */
  int64_t lookup(std::string_view id) const;
  int64_t time(uint32_t d) const { return time_[d]; }
  uint32_t site(uint32_t d) const { return site_[d]; }
  uint32_t cat(uint32_t d) const { return cat_[d]; }
  std::string_view siteName(uint32_t code) const { return dictName(S_SITEDICT_OFF, S_SITEDICT_BLOB, code); }
  std::string_view catName(uint32_t code) const { return dictName(S_CATDICT_OFF, S_CATDICT_BLOB, code); }
  uint32_t siteCode(std::string_view s) const { return dictCode(S_SITEDICT_OFF, S_SITEDICT_BLOB, h_->nsites, s); }
  uint32_t catCode(std::string_view s) const { return dictCode(S_CATDICT_OFF, S_CATDICT_BLOB, h_->ncats, s); }
  uint32_t siteCount(uint32_t code) const { return sec<uint32_t>(S_SITE_COUNT)[code]; }
  uint32_t catCount(uint32_t code) const { return sec<uint32_t>(S_CAT_COUNT)[code]; }
  std::string_view meta(uint32_t d) const { return str(S_METABLOB, metaoff_[d], metaoff_[d + 1]); }

  const uint64_t* fwdOffsets() const { return fwdoff_; }
  uint64_t fwdBegin(uint32_t d) const { return fwdoff_[d]; }
  uint64_t fwdEnd(uint32_t d) const { return fwdoff_[d + 1]; }
  uint32_t fwdCount(uint32_t d) const { return static_cast<uint32_t>(fwdoff_[d + 1] - fwdoff_[d]); }
  /**
   * Document d's indices and stored values into idx[0..n) and val[0..n), n = fwdCount(d) (fwd_codec.cc).
   * Throws CORRUPT when its bytes do not decode to n increasing indices below the width.
   */
  void forward(uint32_t d, uint32_t* idx, float* val) const;
  /**
   * The dot product of document d's stored values with the dense query qd, products summed in double in
   * dotDense's lanes and order (search_internal.h): the same bits. buf: room for fwdCount(d) floats.
   */
  double dotForward(uint32_t d, const float* qd, float* buf) const;
  /** What one unit of a stored code is worth in document d (format 2: a float16 code's scale). */
  float valueUnit(uint32_t d) const { return fwdscale_[d]; }
  /** Document d's value codes as floats into out[0..fwdCount(d)) (times valueUnit(d): the stored values). */
  void valuesOf(uint32_t d, float* out) const;
  /** Starts loading document d's forward entries into the cache (for rescoring a few documents ahead). */
  void prefetchForward(uint32_t d) const;
  /** Starts loading where document d's forward entries are (both offsets and its unit: for prefetchForward later). */
  void prefetchForwardOffsets(uint32_t d) const;

  uint32_t listBegin(uint32_t dim) const { return dimlists_[dim]; }
  uint32_t listEnd(uint32_t dim) const { return dimlists_[dim + 1]; }
  const ListInfo& list(uint32_t l) const { return lists_[l]; }
  /** Prefetch hints (a search's list table reads): the list offsets of dim, and the first two lines of its lists. */
  void prefetchListOffsets(uint32_t dim) const { __builtin_prefetch(dimlists_ + dim); }
  void prefetchLists(uint32_t dim) const {
    const char* p = reinterpret_cast<const char*>(lists_ + dimlists_[dim]);
    __builtin_prefetch(p);
    __builtin_prefetch(p + 64);
  }
  const BlockInfo* blocks() const { return blocks_; }
  const uint8_t* pdata() const { return pdata_; }

  /** First local doc with time >= t. */
  uint32_t lowerTime(int64_t t) const;
  /** First local doc with time > t. */
  uint32_t upperTime(int64_t t) const;

 private:
  template <typename T>
  const T* sec(int s) const { return reinterpret_cast<const T*>(map_.data() + h_->off[s]); }
  std::string_view str(int s, uint64_t a, uint64_t b) const {
    return std::string_view(reinterpret_cast<const char*>(map_.data() + h_->off[s] + a), b - a);
  }
  std::string_view dictName(int offs, int blob, uint32_t code) const;
  /** Format 4's part of dotForward: the sum of the codes times the query (not yet times the unit). */
  double dotNibbles(uint32_t d, const float* qd, const float* codes) const;
  uint32_t dictCode(int offs, int blob, uint32_t n, std::string_view s) const;

  Mapping map_;
  const SegHeader* h_;
  const uint64_t* idoff_;
  const uint32_t* idsort_;
  const int64_t* time_;
  const uint32_t* site_;
  const uint32_t* cat_;
  const uint64_t* metaoff_;
  const uint64_t* fwdoff_;
  const uint64_t* fwdidxoff_;
  const uint8_t* fwdidx_;
  const uint8_t* fwdval_;    // 11-bit codes (format 4), 12-bit codes (format 3) or float16 (format 2)
  uint32_t version_ = kSegVersion;
  const float* fwdscale_;
  const uint32_t* dimlists_;
  const ListInfo* lists_;
  const BlockInfo* blocks_;
  const uint8_t* pdata_;
};

/** One document given to the builder. idx is u16 (idxBytes 2) or u32 (idxBytes 4). */
struct BuildDoc {
  std::string_view id, meta, site, cat;
  int64_t time = kNoTime;
  const void* idx = nullptr;
  uint8_t idxBytes = 4;
  const float* val = nullptr;
  uint32_t nnz = 0;
};

struct BuildOptions {
  std::vector<float> tierFrac{0.05f, 0.15f, 0.35f, 1.0f};
  uint32_t minTierList = 256;
};

struct BuildResult {
  uint32_t docs = 0;
  uint64_t nnz = 0;
  uint64_t bytes = 0;
  uint64_t postingsBytes = 0;
};

/** Writes a new segment file at path (created or truncated, fsynced). Ids must be unique. */
BuildResult buildSegment(const std::string& path, uint32_t width, std::vector<BuildDoc>& docs, const BuildOptions& opt);

/** A deletion bitmap (bit d set = local doc d deleted), from a file written by the JavaScript side. */
struct Deletions {
  std::vector<uint8_t> bits;
  uint32_t ndeleted = 0;
  bool has(uint32_t d) const { return (bits[d >> 3] >> (d & 7)) & 1; }
};
/** File: "SCDVDEL1", u32 ndocs, u32 ndeleted, bitmap[ceil(ndocs/8)], u32 CRC-32 of all bytes before. */
std::shared_ptr<const Deletions> loadDeletions(const std::string& path, uint32_t ndocs);

struct MergeInput {
  std::shared_ptr<Segment> seg;
  std::shared_ptr<const Deletions> del;
};
/** Live documents of the inputs into one new segment at path. */
BuildResult mergeSegments(const std::string& path, const std::vector<MergeInput>& inputs, const BuildOptions& opt);

}  // namespace scdv
