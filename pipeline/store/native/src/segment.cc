#include "segment.h"

#include "fwd_codec.h"
#include "posting_codec.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <unordered_map>

namespace scdv {

static const char kSegMagic[8] = {'S', 'C', 'D', 'V', 'S', 'E', 'G', '1'};
static const char kDelMagic[8] = {'S', 'C', 'D', 'V', 'D', 'E', 'L', '1'};

// ---------------------------------------------------------------------------------------------- reader

Segment::Segment(const std::string& path) : map_(path) {
  auto bad = [&](const std::string& why) -> StoreError {
    return StoreError("segment " + path + " is damaged: " + why, "CORRUPT");
  };
  // The magic and the format version come first, and are read before anything else of the header is
  // trusted: a segment written by another format version is reported as such, not as damage.
  if (map_.size() < 12) throw bad("too short");
  h_ = reinterpret_cast<const SegHeader*>(map_.data());
  if (std::memcmp(h_->magic, kSegMagic, 8) != 0) throw bad("not a segment file");
  if (h_->version > kSegVersion || h_->version < kSegVersionOldest) {
    throw StoreError("segment " + path + " has format version " + std::to_string(h_->version) + "; this build reads versions " +
                         std::to_string(kSegVersionOldest) + " to " + std::to_string(kSegVersion),
                     "FORMAT_UNSUPPORTED",
                     {{"path", path}, {"found", std::to_string(h_->version)}, {"expected", std::to_string(kSegVersionOldest) + " to " + std::to_string(kSegVersion)}});
  }
  if (map_.size() < sizeof(SegHeader)) throw bad("too short");
  if (h_->headerBytes != sizeof(SegHeader)) throw bad("header size");
  if (crc32(h_, offsetof(SegHeader, crc)) != h_->crc) throw bad("header checksum");
  if (h_->fileBytes != map_.size()) throw bad("file size");
  const uint64_t n = h_->ndocs, nnz = h_->nnz;
  if (h_->idxBytes != 2 && h_->idxBytes != 4) throw bad("index width");
  if (h_->blockSize != kBlockSize || h_->windowDocs != kWindowDocs) throw bad("block size");
  for (int s = 0; s < S_COUNT; s++) {
    if (h_->off[s] % 8 != 0 || h_->off[s] > map_.size() || h_->len[s] > map_.size() - h_->off[s]) throw bad("section bounds");
  }
  auto need = [&](int s, uint64_t bytes) {
    if (h_->len[s] != bytes) throw bad("section " + std::to_string(s) + " size");
  };
  need(S_IDOFF, 8 * (n + 1));
  need(S_IDSORT, 4 * n);
  need(S_TIME, 8 * n);
  need(S_SITE, 4 * n);
  need(S_CAT, 4 * n);
  need(S_SITEDICT_OFF, 8 * (uint64_t(h_->nsites) + 1));
  need(S_SITE_COUNT, 4 * (uint64_t(h_->nsites) + 1));
  need(S_CATDICT_OFF, 8 * (uint64_t(h_->ncats) + 1));
  need(S_CAT_COUNT, 4 * (uint64_t(h_->ncats) + 1));
  need(S_METAOFF, 8 * (n + 1));
  need(S_FWDOFF, 8 * (n + 1));
  need(S_FWDIDXOFF, 8 * (n + 1));
  version_ = h_->version;
  const uint64_t fwdPad = version_ >= 4 ? kFwdPad : 0;  // format 4's decoders load past a document's end
  need(S_FWDVAL, version_ == 2 ? 2 * nnz : version_ == 3 ? code12Bytes(nnz) : codeBytes(nnz) + fwdPad);
  need(S_FWDSCALE, 4 * n);
  need(S_DIMLISTS, 4 * (uint64_t(h_->width) + 1));
  need(S_LISTS, sizeof(ListInfo) * uint64_t(h_->nlists));
  need(S_BLOCKS, sizeof(BlockInfo) * h_->nblocks);
  idoff_ = sec<uint64_t>(S_IDOFF);
  idsort_ = sec<uint32_t>(S_IDSORT);
  time_ = sec<int64_t>(S_TIME);
  site_ = sec<uint32_t>(S_SITE);
  cat_ = sec<uint32_t>(S_CAT);
  metaoff_ = sec<uint64_t>(S_METAOFF);
  fwdoff_ = sec<uint64_t>(S_FWDOFF);
  fwdidxoff_ = sec<uint64_t>(S_FWDIDXOFF);
  fwdidx_ = sec<uint8_t>(S_FWDIDX);
  fwdval_ = sec<uint8_t>(S_FWDVAL);
  fwdscale_ = sec<float>(S_FWDSCALE);
  dimlists_ = sec<uint32_t>(S_DIMLISTS);
  lists_ = sec<ListInfo>(S_LISTS);
  blocks_ = sec<BlockInfo>(S_BLOCKS);
  pdata_ = sec<uint8_t>(S_PDATA);
  if (idoff_[n] != h_->len[S_IDBLOB] || metaoff_[n] != h_->len[S_METABLOB] || fwdoff_[n] != nnz ||
      fwdidxoff_[n] + fwdPad != h_->len[S_FWDIDX]) throw bad("offset tables");
  for (uint64_t d = 0; d < n; d++) {
    if (idoff_[d] > idoff_[d + 1] || metaoff_[d] > metaoff_[d + 1] || fwdoff_[d] > fwdoff_[d + 1] || fwdidxoff_[d] > fwdidxoff_[d + 1]) throw bad("offset tables");
    // Bytes of the index gaps: at least one per entry and at most 5 (varints); nibbles: 1 to 9 per entry.
    const uint64_t entries = fwdoff_[d + 1] - fwdoff_[d], bytes = fwdidxoff_[d + 1] - fwdidxoff_[d];
    if (version_ >= 4 ? 2 * bytes < entries || bytes > (9 * entries + 1) / 2 : bytes < entries || bytes > 5 * entries) throw bad("offset tables");
    if (!(fwdscale_[d] > 0) || !std::isfinite(fwdscale_[d])) throw bad("forward scales");
    if (idsort_[d] >= n || site_[d] > h_->nsites || cat_[d] > h_->ncats) throw bad("doc table");
  }
  const uint64_t* so = sec<uint64_t>(S_SITEDICT_OFF);
  const uint64_t* co = sec<uint64_t>(S_CATDICT_OFF);
  if (so[h_->nsites] != h_->len[S_SITEDICT_BLOB] || co[h_->ncats] != h_->len[S_CATDICT_BLOB]) throw bad("dictionaries");
  if (dimlists_[0] != 0 || dimlists_[h_->width] != h_->nlists) throw bad("dim table");
  for (uint32_t i = 0; i < h_->width; i++) if (dimlists_[i] > dimlists_[i + 1]) throw bad("dim table");
  const uint64_t pdlen = h_->len[S_PDATA];
  if (pdlen < kPdataPad) throw bad("postings");
  for (uint32_t l = 0; l < h_->nlists; l++) {
    const ListInfo& L = lists_[l];
    if (L.block0 + L.nblocks > h_->nblocks || L.dataOff > pdlen || L.dim >= h_->width) throw bad("list table");
    uint64_t cnt = 0;
    for (uint32_t b = 0; b < L.nblocks; b++) {
      const BlockInfo& B = blocks_[L.block0 + b];
      const uint64_t c = uint64_t(B.cntm1) + 1, at = L.dataOff + B.dataRel;
      // A patched block's count of wide gaps follows its weights and low bytes: those first, then the rest.
      uint64_t bytes = c + (B.bits == kGapsPatched ? c : 0);
      if (B.last >= n || B.first > B.last || B.first / kWindowDocs != B.last / kWindowDocs || !gapLayoutKnown(B.bits, version_) ||
          (B.bits == kGapsPatched && c < 2) || at + bytes > pdlen - kPdataPad) throw bad("block table");
      bytes = c + gapBytes(static_cast<uint32_t>(c), B.bits, pdata_ + at + c);
      if (at + bytes > pdlen - kPdataPad) throw bad("block table");
      cnt += c;
    }
    if (cnt != L.count) throw bad("list counts");
  }
  for (uint32_t i = 1; i < n; i++) if (time_[i - 1] > time_[i]) throw bad("time column order");
}

int64_t Segment::lookup(std::string_view id) const {
  uint32_t lo = 0, hi = h_->ndocs;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    int c = this->id(idsort_[mid]).compare(id);
    if (c == 0) return idsort_[mid];
    if (c < 0) lo = mid + 1; else hi = mid;
  }
  return -1;
}

std::string_view Segment::dictName(int offs, int blob, uint32_t code) const {
  if (code == 0) return std::string_view();
  const uint64_t* o = sec<uint64_t>(offs);
  return str(blob, o[code - 1], o[code]);
}

uint32_t Segment::dictCode(int offs, int blob, uint32_t n, std::string_view s) const {
  const uint64_t* o = sec<uint64_t>(offs);
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    int c = str(blob, o[mid], o[mid + 1]).compare(s);
    if (c == 0) return mid + 1;
    if (c < 0) lo = mid + 1; else hi = mid;
  }
  return 0;
}

uint32_t Segment::lowerTime(int64_t t) const {
  return static_cast<uint32_t>(std::lower_bound(time_, time_ + h_->ndocs, t) - time_);
}
uint32_t Segment::upperTime(int64_t t) const {
  return static_cast<uint32_t>(std::upper_bound(time_, time_ + h_->ndocs, t) - time_);
}

// --------------------------------------------------------------------------------------------- builder

namespace {

inline uint32_t docIdx(const BuildDoc& d, uint32_t j) {
  return d.idxBytes == 2 ? static_cast<const uint16_t*>(d.idx)[j] : static_cast<const uint32_t*>(d.idx)[j];
}

struct Dict {
  std::vector<std::string_view> names;  // sorted, unique
  std::unordered_map<std::string_view, uint32_t> code;
  std::vector<uint32_t> counts;         // index 0: docs without a value
};

Dict makeDict(const std::vector<BuildDoc>& docs, bool site) {
  Dict d;
  for (const auto& doc : docs) {
    std::string_view s = site ? doc.site : doc.cat;
    if (!s.empty()) d.code.emplace(s, 0);
  }
  d.names.reserve(d.code.size());
  for (auto& kv : d.code) d.names.push_back(kv.first);
  std::sort(d.names.begin(), d.names.end());
  for (uint32_t i = 0; i < d.names.size(); i++) d.code[d.names[i]] = i + 1;
  d.counts.assign(d.names.size() + 1, 0);
  return d;
}


}  // namespace

BuildResult buildSegment(const std::string& path, uint32_t width, std::vector<BuildDoc>& docs, const BuildOptions& opt) {
  const uint32_t n = static_cast<uint32_t>(docs.size());
  if (docs.size() >= UINT32_MAX) throw StoreError("too many documents for one segment");
  if (width == 0) throw StoreError("width must be positive");
  if (opt.tierFrac.empty() || opt.tierFrac.size() > kMaxTiers || opt.tierFrac.back() != 1.0f) throw StoreError("bad tier fractions");

  // Local order: by (time, id).
  std::sort(docs.begin(), docs.end(), [](const BuildDoc& a, const BuildDoc& b) {
    if (a.time != b.time) return a.time < b.time;
    return a.id < b.id;
  });
  std::vector<uint32_t> idsort(n);
  std::iota(idsort.begin(), idsort.end(), 0);
  std::sort(idsort.begin(), idsort.end(), [&](uint32_t a, uint32_t b) { return docs[a].id < docs[b].id; });
  for (uint32_t i = 1; i < n; i++) {
    if (docs[idsort[i - 1]].id == docs[idsort[i]].id) throw StoreError("duplicate id in segment build: " + std::string(docs[idsort[i]].id));
  }
  uint64_t nnz = 0;
  for (const auto& d : docs) {
    for (uint32_t j = 0; j < d.nnz; j++) {
      uint32_t ix = docIdx(d, j);
      if (ix >= width || (j > 0 && ix <= docIdx(d, j - 1))) throw StoreError("document " + std::string(d.id) + ": bad indices");
    }
    nnz += d.nnz;
  }
  const uint32_t idxBytes = width <= 65536 ? 2 : 4;

  SegHeader h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, kSegMagic, 8);
  h.version = kSegVersion;
  h.headerBytes = sizeof(SegHeader);
  h.width = width;
  h.ndocs = n;
  h.nnz = nnz;
  h.idxBytes = idxBytes;
  h.blockSize = kBlockSize;
  h.ntiers = static_cast<uint32_t>(opt.tierFrac.size());
  for (size_t t = 0; t < opt.tierFrac.size(); t++) h.tierFrac[t] = opt.tierFrac[t];
  h.minTierList = opt.minTierList;
  h.windowDocs = kWindowDocs;

  FileWriter w(path);
  w.write(&h, sizeof h);
  auto begin = [&](int s) { w.pad(64); h.off[s] = w.pos(); };
  auto end = [&](int s) { h.len[s] = w.pos() - h.off[s]; };

  // Ids.
  begin(S_IDOFF);
  {
    uint64_t o = 0;
    w.write(&o, 8);
    for (const auto& d : docs) { o += d.id.size(); w.write(&o, 8); }
  }
  end(S_IDOFF);
  begin(S_IDBLOB);
  for (const auto& d : docs) w.write(d.id.data(), d.id.size());
  end(S_IDBLOB);
  begin(S_IDSORT);
  w.write(idsort.data(), 4 * size_t(n));
  end(S_IDSORT);
  std::vector<uint32_t>().swap(idsort);

  begin(S_TIME);
  for (const auto& d : docs) w.write(&d.time, 8);
  end(S_TIME);

  // Site and category columns with their dictionaries.
  for (int which = 0; which < 2; which++) {
    bool site = which == 0;
    Dict dict = makeDict(docs, site);
    begin(site ? S_SITE : S_CAT);
    for (const auto& d : docs) {
      std::string_view s = site ? d.site : d.cat;
      uint32_t c = s.empty() ? 0 : dict.code[s];
      dict.counts[c]++;
      w.write(&c, 4);
    }
    end(site ? S_SITE : S_CAT);
    begin(site ? S_SITEDICT_OFF : S_CATDICT_OFF);
    uint64_t o = 0;
    w.write(&o, 8);
    for (auto s : dict.names) { o += s.size(); w.write(&o, 8); }
    end(site ? S_SITEDICT_OFF : S_CATDICT_OFF);
    begin(site ? S_SITEDICT_BLOB : S_CATDICT_BLOB);
    for (auto s : dict.names) w.write(s.data(), s.size());
    end(site ? S_SITEDICT_BLOB : S_CATDICT_BLOB);
    begin(site ? S_SITE_COUNT : S_CAT_COUNT);
    w.write(dict.counts.data(), 4 * dict.counts.size());
    end(site ? S_SITE_COUNT : S_CAT_COUNT);
    (site ? h.nsites : h.ncats) = static_cast<uint32_t>(dict.names.size());
  }

  // Metadata.
  begin(S_METAOFF);
  {
    uint64_t o = 0;
    w.write(&o, 8);
    for (const auto& d : docs) { o += d.meta.size(); w.write(&o, 8); }
  }
  end(S_METAOFF);
  begin(S_METABLOB);
  for (const auto& d : docs) w.write(d.meta.data(), d.meta.size());
  end(S_METABLOB);

  // Forward index.
  begin(S_FWDOFF);
  {
    uint64_t o = 0;
    w.write(&o, 8);
    for (const auto& d : docs) { o += d.nnz; w.write(&o, 8); }
  }
  end(S_FWDOFF);
  // Each document's unit, then its index gaps (nibbles, with their byte offsets), 11-bit value codes and units.
  std::vector<float> units(n);
  for (uint32_t dl = 0; dl < n; dl++) units[dl] = docUnit(docs[dl].val, docs[dl].nnz);
  std::vector<uint64_t> idxOff(size_t(n) + 1, 0);
  begin(S_FWDIDX);
  {
    std::vector<uint8_t> tmp;
    std::vector<uint32_t> gaps;
    for (uint32_t dl = 0; dl < n; dl++) {
      const auto& d = docs[dl];
      tmp.assign((size_t(d.nnz) * 9 + 1) / 2, 0);
      gaps.resize(d.nnz);
      for (uint32_t j = 0; j < d.nnz; j++) gaps[j] = j == 0 ? docIdx(d, 0) : docIdx(d, j) - docIdx(d, j - 1) - 1;
      const uint64_t pos = putNibbleGaps(tmp.data(), gaps.data(), d.nnz);
      w.write(tmp.data(), size_t((pos + 1) / 2));
      idxOff[dl + 1] = idxOff[dl] + (pos + 1) / 2;
    }
    w.zeros(kFwdPad);
  }
  end(S_FWDIDX);
  begin(S_FWDIDXOFF);
  w.write(idxOff.data(), 8 * idxOff.size());
  end(S_FWDIDXOFF);
  std::vector<uint64_t>().swap(idxOff);
  begin(S_FWDVAL);
  {
    std::vector<uint8_t> codes(codeBytes(nnz) + kFwdPad, 0);
    uint64_t e = 0;
    for (uint32_t dl = 0; dl < n; dl++) {
      const auto& d = docs[dl];
      for (uint32_t j = 0; j < d.nnz; j++) putCode(codes.data(), e++, encodeCode(d.val[j], units[dl]));
    }
    w.write(codes.data(), codes.size());
  }
  end(S_FWDVAL);
  begin(S_FWDSCALE);
  w.write(units.data(), 4 * size_t(n));
  end(S_FWDSCALE);

  // Inverted index: CSC first (postings of each dim in local-doc order).
  std::vector<uint64_t> start(size_t(width) + 1, 0);
  for (const auto& d : docs) for (uint32_t j = 0; j < d.nnz; j++) start[docIdx(d, j) + 1]++;
  for (uint32_t i = 0; i < width; i++) start[i + 1] += start[i];
  std::vector<uint32_t> pdoc(nnz);
  std::vector<float> pval(nnz);
  {
    std::vector<uint64_t> cur(start.begin(), start.end() - 1);
    for (uint32_t dl = 0; dl < n; dl++) {
      const auto& d = docs[dl];
      for (uint32_t j = 0; j < d.nnz; j++) {
        uint64_t p = cur[docIdx(d, j)]++;
        pdoc[p] = dl;
        pval[p] = storedValue(d.val[j], units[dl]);  // postings approximate the stored values
      }
    }
  }

  std::vector<uint32_t> dimlists(size_t(width) + 1, 0);
  std::vector<ListInfo> lists;
  std::vector<BlockInfo> blocks;
  begin(S_PDATA);
  const uint64_t pdataStart = w.pos();
  const int T = static_cast<int>(opt.tierFrac.size());
  std::vector<float> mags;
  std::vector<uint8_t> tierOf;
  std::vector<uint32_t> ld;
  std::vector<float> lv;
  std::vector<uint8_t> buf;
  std::vector<uint32_t> gaps;
  for (uint32_t i = 0; i < width; i++) {
    const uint64_t a = start[i], b = start[i + 1];
    const uint64_t c = b - a;
    dimlists[i] = static_cast<uint32_t>(lists.size());
    if (c == 0) continue;
    // Tier thresholds on |value|: tier t holds the postings whose rank by magnitude is within tierFrac[t].
    int tiers = (c < opt.minTierList) ? 1 : T;
    float th[kMaxTiers];
    if (tiers == 1) {
      th[0] = -1.0f;
    } else {
      mags.resize(c);
      for (uint64_t p = 0; p < c; p++) mags[p] = std::fabs(pval[a + p]);
      for (int t = 0; t < tiers - 1; t++) {
        uint64_t r = static_cast<uint64_t>(std::ceil(double(opt.tierFrac[t]) * double(c)));
        if (r < 1) r = 1;
        if (r > c) r = c;
        std::nth_element(mags.begin(), mags.begin() + (r - 1), mags.end(), std::greater<float>());
        th[t] = mags[r - 1];
      }
      th[tiers - 1] = -1.0f;
    }
    tierOf.resize(c);
    for (uint64_t p = 0; p < c; p++) {
      float m = std::fabs(pval[a + p]);
      int t = 0;
      while (m < th[t]) t++;  // th[tiers-1] < 0 stops it
      tierOf[p] = static_cast<uint8_t>(t);
    }
    for (int t = 0; t < tiers; t++) {
      ld.clear();
      lv.clear();
      for (uint64_t p = 0; p < c; p++) {
        if (tierOf[p] == t) { ld.push_back(pdoc[a + p]); lv.push_back(pval[a + p]); }
      }
      if (ld.empty()) continue;
      ListInfo L;
      std::memset(&L, 0, sizeof L);
      L.dim = i;
      L.tier = static_cast<uint32_t>(t);
      L.count = static_cast<uint32_t>(ld.size());
      float mx = -INFINITY, mn = INFINITY, maxabs = 0.0f;
      double energy = 0;
      for (float v : lv) {
        mx = std::max(mx, v);
        mn = std::min(mn, v);
        maxabs = std::max(maxabs, std::fabs(v));
        energy += double(v) * v;
      }
      L.maxv = mx;
      L.minv = mn;
      L.energy = static_cast<float>(energy);
      L.scale = maxabs > 0 ? maxabs / 127.0f : 1.0f;
      L.block0 = blocks.size();
      L.dataOff = w.pos() - pdataStart;
      const double inv = 1.0 / double(L.scale);
      for (size_t s = 0, e = 0; s < ld.size(); s = e) {
        // Up to kBlockSize postings, all in the window of the first one.
        e = s + 1;
        const uint32_t win = ld[s] / kWindowDocs;
        while (e < ld.size() && e - s < kBlockSize && ld[e] / kWindowDocs == win) e++;
        uint32_t cnt = static_cast<uint32_t>(e - s);
        BlockInfo B;
        B.first = ld[s];
        B.last = ld[e - 1];
        B.dataRel = static_cast<uint32_t>(w.pos() - pdataStart - L.dataOff);
        B.cntm1 = static_cast<uint8_t>(cnt - 1);
        double bmx = -INFINITY, bmn = INFINITY;
        buf.assign(cnt, 0);
        for (size_t j = s; j < e; j++) {
          double x = double(lv[j]) * inv;
          long q = std::lround(x);
          q = std::max(-127L, std::min(127L, q));
          buf[j - s] = static_cast<uint8_t>(static_cast<int8_t>(q));
          bmx = std::max(bmx, x);
          bmn = std::min(bmn, x);
        }
        B.qmax = static_cast<int8_t>(std::max(-127.0, std::min(127.0, std::ceil(bmx))));
        B.qmin = static_cast<int8_t>(std::max(-127.0, std::min(127.0, std::floor(bmn))));
        gaps.clear();
        for (size_t j = s + 1; j < e; j++) gaps.push_back(ld[j] - ld[j - 1] - 1);
        B.bits = appendGaps(buf, gaps.data(), cnt - 1);
        w.write(buf.data(), buf.size());
        blocks.push_back(B);
      }
      L.nblocks = static_cast<uint32_t>(blocks.size() - L.block0);
      lists.push_back(L);
    }
  }
  dimlists[width] = static_cast<uint32_t>(lists.size());
  w.zeros(kPdataPad);  // decoders read up to 16 bytes at a time
  end(S_PDATA);
  std::vector<uint32_t>().swap(pdoc);
  std::vector<float>().swap(pval);

  begin(S_DIMLISTS);
  w.write(dimlists.data(), 4 * dimlists.size());
  end(S_DIMLISTS);
  begin(S_LISTS);
  w.write(lists.data(), sizeof(ListInfo) * lists.size());
  end(S_LISTS);
  begin(S_BLOCKS);
  w.write(blocks.data(), sizeof(BlockInfo) * blocks.size());
  end(S_BLOCKS);
  w.pad(64);
  h.nlists = static_cast<uint32_t>(lists.size());
  h.nblocks = blocks.size();
  h.fileBytes = w.pos();
  h.crc = crc32(&h, offsetof(SegHeader, crc));
  w.pwriteAt(0, &h, sizeof h);
  w.finish();

  BuildResult r;
  r.docs = n;
  r.nnz = nnz;
  r.bytes = h.fileBytes;
  r.postingsBytes = h.len[S_DIMLISTS] + h.len[S_LISTS] + h.len[S_BLOCKS] + h.len[S_PDATA];
  return r;
}

// ------------------------------------------------------------------------------------------- deletions

std::shared_ptr<const Deletions> loadDeletions(const std::string& path, uint32_t ndocs) {
  std::vector<uint8_t> f = readFile(path);
  auto bad = [&](const std::string& why) { return StoreError("deletion file " + path + " is damaged: " + why, "CORRUPT"); };
  const size_t nb = (size_t(ndocs) + 7) / 8;
  if (f.size() != 16 + nb + 4) throw bad("size");
  if (std::memcmp(f.data(), kDelMagic, 8) != 0) throw bad("not a deletion file");
  uint32_t n, nd, crc;
  std::memcpy(&n, &f[8], 4);
  std::memcpy(&nd, &f[12], 4);
  std::memcpy(&crc, &f[16 + nb], 4);
  if (n != ndocs) throw bad("document count");
  if (crc32(f.data(), 16 + nb) != crc) throw bad("checksum");
  auto d = std::make_shared<Deletions>();
  d->bits.assign(f.begin() + 16, f.begin() + 16 + nb);
  uint32_t cnt = 0;
  for (uint8_t byte : d->bits) cnt += __builtin_popcount(byte);
  if (cnt != nd) throw bad("deleted count");
  d->ndeleted = nd;
  return d;
}

// ----------------------------------------------------------------------------------------------- merge

BuildResult mergeSegments(const std::string& path, const std::vector<MergeInput>& inputs, const BuildOptions& opt) {
  if (inputs.empty()) throw StoreError("nothing to merge");
  uint32_t width = inputs[0].seg->width();
  size_t total = 0;
  for (const auto& in : inputs) {
    if (in.seg->width() != width) throw StoreError("segments of different widths");
    total += in.seg->ndocs();
  }
  std::vector<BuildDoc> docs;
  docs.reserve(total);
  // The documents' decoded forward entries (4 + 4 bytes per non-zero; coding them again is lossless).
  uint64_t totalNnz = 0;
  for (const auto& in : inputs) {
    for (uint32_t d = 0; d < in.seg->ndocs(); d++) if (!(in.del && in.del->has(d))) totalNnz += in.seg->fwdCount(d);
  }
  std::vector<uint32_t> idxArena(totalNnz);
  std::vector<float> valArena(totalNnz);
  uint64_t at = 0;
  for (const auto& in : inputs) {
    const Segment& s = *in.seg;
    for (uint32_t d = 0; d < s.ndocs(); d++) {
      if (in.del && in.del->has(d)) continue;
      BuildDoc b;
      b.id = s.id(d);
      b.meta = s.meta(d);
      b.site = s.siteName(s.site(d));
      b.cat = s.catName(s.cat(d));
      b.time = s.time(d);
      b.nnz = s.fwdCount(d);
      s.forward(d, idxArena.data() + at, valArena.data() + at);
      b.idxBytes = 4;
      b.idx = idxArena.data() + at;
      b.val = valArena.data() + at;
      at += b.nnz;
      docs.push_back(b);
    }
  }
  if (docs.empty()) throw StoreError("every document of the merged segments is deleted", "EMPTY");
  return buildSegment(path, width, docs, opt);
}

}  // namespace scdv
