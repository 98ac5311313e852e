// The store addon's View class: one process's snapshot-based view of a collection (segments + WAL tail) and its search.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

#include "addon_js.h"
#include "rerank.h"
#include "fwd_codec.h"
#include "search.h"
#include "search_queue.h"
#include "segment.h"
#include "util.h"

namespace scdv::js {

namespace {

struct CachedSeg {
  std::shared_ptr<Segment> seg;
  ino_t ino;
  off_t size;
};

class View : public Napi::ObjectWrap<View> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "View", {
      InstanceMethod("update", &View::Guard<&View::Update>),
      InstanceMethod("search", &View::Guard<&View::Search>),
      InstanceMethod("searchAsync", &View::Guard<&View::SearchAsync>),
      InstanceMethod("searchIdsAsync", &View::Guard<&View::SearchIdsAsync>),
      InstanceMethod("searchRerankedAsync", &View::Guard<&View::SearchRerankedAsync>),
      InstanceMethod("searchRerankedByIdAsync", &View::Guard<&View::SearchRerankedByIdAsync>),
      InstanceMethod("metas", &View::Guard<&View::Metas>),
      InstanceMethod("get", &View::Guard<&View::Get>),
      InstanceMethod("vectors", &View::Guard<&View::Vectors>),
      InstanceMethod("live", &View::Guard<&View::Live>),
      InstanceMethod("scores", &View::Guard<&View::Scores>),
      InstanceMethod("locate", &View::Guard<&View::Locate>),
      InstanceMethod("count", &View::Guard<&View::Count>),
      InstanceMethod("pin", &View::Guard<&View::Pin>),
      InstanceMethod("ids", &View::Guard<&View::Ids>),
      InstanceMethod("stats", &View::Guard<&View::Stats>),
      InstanceMethod("close", &View::Guard<&View::Close>),
    });
  }

  template <Napi::Value (View::*M)(const Napi::CallbackInfo&)>
  Napi::Value Guard(const Napi::CallbackInfo& info) {
    return guarded(info.Env(), [&] { return (this->*M)(info); });
  }

  explicit View(const Napi::CallbackInfo& info) : Napi::ObjectWrap<View>(info) {
    width_ = info[0].As<Napi::Number>().Uint32Value();
    if (width_ == 0) throw Napi::TypeError::New(info.Env(), "width must be positive");
    auto st = std::make_shared<State>();
    st->mem = std::make_shared<MemTable>();
    state_ = st;
  }

  std::shared_ptr<const State> snapshot() {
    std::lock_guard<std::mutex> g(mu_);
    return state_;
  }
  uint32_t width() const { return width_; }

 private:
  /** update({ segments?: [{path, delPath}], resetMem?: bool, upserts?: Packed, deletes?: string[] }) */
  Napi::Value Update(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Object spec = info[0].As<Napi::Object>();
    std::shared_ptr<const State> cur = snapshot();
    auto next = std::make_shared<State>();
    bool segsChanged = false;
    if (spec.Get("segments").IsArray()) {
      segsChanged = true;
      Napi::Array a = spec.Get("segments").As<Napi::Array>();
      std::map<std::string, CachedSeg> cache;
      for (uint32_t i = 0; i < a.Length(); i++) {
        Napi::Object s = a.Get(i).As<Napi::Object>();
        std::string path = str(s.Get("path"));
        std::string delPath = s.Get("delPath").IsString() ? str(s.Get("delPath")) : std::string();
        struct stat stt;
        if (::stat(path.c_str(), &stt) != 0) throwErrno("cannot open", path);
        std::shared_ptr<Segment> seg;
        auto it = cache_.find(path);
        if (it != cache_.end() && it->second.ino == stt.st_ino && it->second.size == stt.st_size) seg = it->second.seg;
        else seg = std::make_shared<Segment>(path);
        if (seg->width() != width_) throw StoreError("segment " + path + " has width " + std::to_string(seg->width()), "CORRUPT");
        cache[path] = {seg, stt.st_ino, stt.st_size};
        auto sv = std::make_shared<SegView>();
        sv->seg = seg;
        sv->delPath = delPath;
        // Reuse an already loaded deletion file.
        for (const auto& old : cur->segs) {
          if (old->seg == seg && old->delPath == delPath) { sv->del = old->del; break; }
        }
        if (!sv->del && !delPath.empty()) sv->del = loadDeletions(delPath, seg->ndocs());
        next->segs.push_back(sv);
      }
      cache_.swap(cache);
    } else {
      for (const auto& s : cur->segs) {
        auto sv = std::make_shared<SegView>(*s);
        next->segs.push_back(sv);
      }
    }
    // Memtable.
    std::shared_ptr<MemTable> mem;
    bool resetMem = spec.Get("resetMem").ToBoolean();
    if (resetMem) mem = std::make_shared<MemTable>();
    else mem = std::make_shared<MemTable>(*cur->mem);
    std::vector<std::string> touched;
    if (spec.Get("upserts").IsObject()) {
      PackedDocs p = PackedDocs::from(spec.Get("upserts").As<Napi::Object>());
      for (size_t i = 0; i < p.ids.size(); i++) {
        auto d = std::make_shared<MemDoc>();
        d->id = p.ids[i];
        d->meta = p.metas[i];
        d->site = p.sites[i];
        d->cat = p.cats[i];
        d->time = PackedDocs::time(p.times[i]);
        d->idx.assign(p.indices.begin() + p.offsets[i], p.indices.begin() + p.offsets[i + 1]);
        d->val.assign(p.values.begin() + p.offsets[i], p.values.begin() + p.offsets[i + 1]);
        // Held as the values a segment will store (fwd_codec.h): a document scores the same before and after a flush.
        const float unit = docUnit(d->val.data(), d->val.size());
        for (float& v : d->val) v = storedValue(v, unit);
        for (uint32_t x : d->idx) if (x >= width_) throw StoreError("document " + d->id + ": index out of range");
        mem->deleted.erase(d->id);
        auto it = mem->pos.find(d->id);
        if (it != mem->pos.end()) {
          mem->nnz -= mem->docs[it->second]->idx.size();
          mem->docs[it->second] = d;
        } else {
          mem->pos.emplace(d->id, mem->docs.size());
          mem->docs.push_back(d);
        }
        mem->nnz += d->idx.size();
        touched.push_back(d->id);
      }
    }
    if (spec.Get("deletes").IsArray()) {
      for (auto& id : strArray(spec.Get("deletes"))) {
        auto it = mem->pos.find(id);
        if (it != mem->pos.end()) {
          size_t at = it->second;
          mem->nnz -= mem->docs[at]->idx.size();
          mem->pos.erase(it);
          if (at != mem->docs.size() - 1) {
            mem->docs[at] = mem->docs.back();
            mem->pos[mem->docs[at]->id] = at;
          }
          mem->docs.pop_back();
        }
        mem->deleted.insert(id);
        touched.push_back(id);
      }
    }
    next->mem = mem;
    // Hidden segment copies: ids present in the memtable (upserted or deleted there).
    for (auto& svc : next->segs) {
      auto* sv = const_cast<SegView*>(svc.get());
      if (segsChanged || resetMem) {
        sv->hidden.clear();
        for (const auto& d : mem->docs) addHidden(*sv, d->id);
        for (const auto& id : mem->deleted) addHidden(*sv, id);
      } else {
        for (const auto& id : touched) addHidden(*sv, id);
      }
      std::sort(sv->hidden.begin(), sv->hidden.end());
      sv->hidden.erase(std::unique(sv->hidden.begin(), sv->hidden.end()), sv->hidden.end());
    }
    {
      std::lock_guard<std::mutex> g(mu_);
      state_ = next;
    }
    return env.Undefined();
  }

  static void addHidden(SegView& sv, const std::string& id) {
    int64_t d = sv.seg->lookup(id);
    if (d >= 0 && !sv.isDeleted(static_cast<uint32_t>(d))) sv.hidden.push_back(static_cast<uint32_t>(d));
  }

  // The ids argument of vectors, metas and scores: an array of strings, else a TypeError naming the call and the entry.
  static std::vector<std::string> idList(const Napi::Value& v, const char* call) {
    const std::string name(call);
    if (!v.IsArray()) throw Napi::TypeError::New(v.Env(), name + "(ids): ids must be an array of strings");
    Napi::Array a = v.As<Napi::Array>();
    std::vector<std::string> ids(a.Length());
    for (uint32_t i = 0; i < a.Length(); i++) {
      Napi::Value x = a.Get(i);
      if (!x.IsString()) throw Napi::TypeError::New(v.Env(), name + "(ids): ids[" + std::to_string(i) + "] is not a string");
      ids[i] = x.As<Napi::String>().Utf8Value();
    }
    return ids;
  }

  Napi::Value Search(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Query q = Query::from(info, width_);
    auto st = snapshot();
    SearchStats stats;
    auto hits = search(*st, width_, q.idx.data(), q.val.data(), static_cast<uint32_t>(q.idx.size()), q.f, q.p, &stats);
    return hitsToJs(env, hits, q.wantStats ? &stats : nullptr);
  }

  class AsyncSearch : public SearchJob {
   public:
    // idsOnly: resolve with { ids, scores } (no metadata strings: the caller fetches the few it keeps with metas).
    AsyncSearch(Napi::Env env, std::shared_ptr<const State> st, uint32_t width, Query q, bool idsOnly)
        : SearchJob(env), st_(std::move(st)), width_(width), q_(std::move(q)), idsOnly_(idsOnly) {}
    void Execute() override {
      hits_ = search(*st_, width_, q_.idx.data(), q_.val.data(), static_cast<uint32_t>(q_.idx.size()), q_.f, q_.p, &stats_);
    }
    Napi::Value Result(Napi::Env env) override {
      if (!idsOnly_) return hitsToJs(env, hits_, q_.wantStats ? &stats_ : nullptr);
      Napi::Array ids = Napi::Array::New(env, hits_.size());
      Napi::Float64Array scores = Napi::Float64Array::New(env, hits_.size());
      for (size_t i = 0; i < hits_.size(); i++) {
        ids.Set(uint32_t(i), Napi::String::New(env, hits_[i].id.data(), hits_[i].id.size()));
        scores[i] = hits_[i].score;
      }
      Napi::Object o = Napi::Object::New(env);
      o.Set("ids", ids);
      o.Set("scores", scores);
      return o;
    }
   private:
    std::shared_ptr<const State> st_;
    uint32_t width_;
    Query q_;
    bool idsOnly_;
    std::vector<Hit> hits_;
    SearchStats stats_;
  };

  Napi::Value SearchAsync(const Napi::CallbackInfo& info) { return queueSearch(info, false); }

  /** searchIdsAsync(indices, values, opts) -> Promise<{ ids: string[], scores: Float64Array }>: searchAsync without metadata */
  Napi::Value SearchIdsAsync(const Napi::CallbackInfo& info) { return queueSearch(info, true); }

  /** searchRerankedAsync(indices, values, opts, spec) -> Promise: the related list's re-ranking on the search threads (addon_rerank.cc) */
  Napi::Value SearchRerankedAsync(const Napi::CallbackInfo& info) { return queueSearchReranked(info, snapshot(), width_); }

  /**
   * searchRerankedByIdAsync(id, opts, spec) -> Promise<same | null>: searchRerankedAsync with a live document's stored
   * vector as the query, looked up on a search thread (null: no live document has the id).
   */
  Napi::Value SearchRerankedByIdAsync(const Napi::CallbackInfo& info) { return queueSearchRerankedById(info, snapshot(), width_); }

  Napi::Value queueSearch(const Napi::CallbackInfo& info, bool idsOnly) {
    Napi::Env env = info.Env();
    Query q = Query::from(info, width_);
    return queueSearchJob(env, std::make_unique<AsyncSearch>(env, snapshot(), width_, std::move(q), idsOnly));
  }

  /**
   * metas(ids) -> (string | null)[]: each live document's metadata (its stored JSON text) from one snapshot, null
   * for an id with no live document. The few hits a re-ranked list keeps, after a searchIdsAsync of its pool.
   */
  Napi::Value Metas(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const auto ids = idList(info[0], "metas");
    const uint32_t n = static_cast<uint32_t>(ids.size());
    auto st = snapshot();
    Napi::Array out = Napi::Array::New(env, n);
    for (uint32_t i = 0; i < n; i++) {
      const LiveDoc at = findLive(*st, ids[i]);
      if (at.mem) out.Set(i, Napi::String::New(env, at.mem->meta.data(), at.mem->meta.size()));
      else if (at.seg) {
        const std::string_view m = at.seg->meta(at.doc);
        out.Set(i, Napi::String::New(env, m.data(), m.size()));
      } else {
        out.Set(i, env.Null());
      }
    }
    return out;
  }

  /** get(id) -> { meta, indices, values } | null */
  Napi::Value Get(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::string id = str(info[0]);
    auto st = snapshot();
    auto make = [&](std::string_view meta, size_t nnz, auto idxAt, const float* vals) {
      Napi::Object o = Napi::Object::New(env);
      o.Set("meta", Napi::String::New(env, meta.data(), meta.size()));
      Napi::Uint32Array ix = Napi::Uint32Array::New(env, nnz);
      Napi::Float32Array vv = Napi::Float32Array::New(env, nnz);
      for (size_t j = 0; j < nnz; j++) { ix[j] = idxAt(j); vv[j] = vals[j]; }
      o.Set("indices", ix);
      o.Set("values", vv);
      return o;
    };
    const LiveDoc at = findLive(*st, id);
    if (at.mem) return make(at.mem->meta, at.mem->idx.size(), [&](size_t j) { return at.mem->idx[j]; }, at.mem->val.data());
    if (!at.seg) return env.Null();
    const uint32_t n = at.seg->fwdCount(at.doc);
    std::vector<uint32_t> idx(n);
    std::vector<float> val(n);
    at.seg->forward(at.doc, idx.data(), val.data());
    return make(at.seg->meta(at.doc), n, [&](size_t j) { return idx[j]; }, val.data());
  }

  /**
   * scores(ids, indices, values) -> Float64Array: each live document's stored vector dotted with the query (the
   * query's indices below the width), NaN for an id with no live document. Re-scores a few candidates without
   * copying their vectors out (pseudo-relevance feedback, pipeline/match/rerank.js).
   */
  Napi::Value Scores(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const auto ids = idList(info[0], "scores");
    Napi::Uint32Array qi = info[1].As<Napi::Uint32Array>();
    Napi::Float32Array qv = info[2].As<Napi::Float32Array>();
    if (qi.ElementLength() != qv.ElementLength()) throw Napi::TypeError::New(env, "indices and values differ in length");
    // The query spread over the view's dense row (zero between calls: cleared by its own indices on the way out, not
    // a width-sized allocation and memset per call).
    if (dense_.size() != width_) dense_.assign(width_, 0.0f);
    float* qd = dense_.data();
    std::vector<uint32_t>& touched = touched_;
    touched.clear();
    for (size_t j = 0; j < qi.ElementLength(); j++) {
      if (qi[j] < width_) { qd[qi[j]] = qv[j]; touched.push_back(qi[j]); }
    }
    struct Clear {
      float* qd; const std::vector<uint32_t>& ix;
      ~Clear() { for (uint32_t x : ix) qd[x] = 0.0f; }
    } clear{qd, touched};
    auto st = snapshot();
    Napi::Float64Array out = Napi::Float64Array::New(env, ids.size());
    for (size_t i = 0; i < ids.size(); i++) {
      const LiveDoc at = findLive(*st, ids[i]);
      out[i] = at.mem ? exactDocScore(*at.mem, qd) : at.seg ? exactDocScore(*at.seg, at.doc, qd) : std::nan("");
    }
    return out;
  }

  /**
   * vectors(ids) -> { found: Uint8Array, offsets: Uint32Array(n + 1), indices, values }: the stored vectors of many
   * documents from one snapshot in one call (no meta), concatenated; document i is indices/values
   * [offsets[i], offsets[i + 1]), found[i] 0 when no live document has the id. For the re-ranking's collapse,
   * which needs ~10 vectors a request: one call instead of ten get()s and their meta strings.
   */
  Napi::Value Vectors(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const auto ids = idList(info[0], "vectors");
    const uint32_t n = static_cast<uint32_t>(ids.size());
    auto st = snapshot();
    Napi::Uint8Array found = Napi::Uint8Array::New(env, n);
    Napi::Uint32Array offsets = Napi::Uint32Array::New(env, n + 1);
    std::vector<uint32_t> idx;
    std::vector<float> val;
    offsets[0] = 0;
    for (uint32_t i = 0; i < n; i++) {
      const LiveDoc at = findLive(*st, ids[i]);
      found[i] = at.mem || at.seg ? 1 : 0;
      if (at.mem) {
        idx.insert(idx.end(), at.mem->idx.begin(), at.mem->idx.end());
        val.insert(val.end(), at.mem->val.begin(), at.mem->val.end());
      } else if (at.seg) {
        const size_t end = idx.size();
        const uint32_t c = at.seg->fwdCount(at.doc);
        idx.resize(end + c);
        val.resize(end + c);
        at.seg->forward(at.doc, idx.data() + end, val.data() + end);
      }
      offsets[i + 1] = static_cast<uint32_t>(idx.size());
    }
    Napi::Uint32Array ix = Napi::Uint32Array::New(env, idx.size());
    Napi::Float32Array vv = Napi::Float32Array::New(env, val.size());
    if (!idx.empty()) {
      std::copy(idx.begin(), idx.end(), ix.Data());
      std::copy(val.begin(), val.end(), vv.Data());
    }
    Napi::Object o = Napi::Object::New(env);
    o.Set("found", found);
    o.Set("offsets", offsets);
    o.Set("indices", ix);
    o.Set("values", vv);
    return o;
  }

  /** live(ids) -> Uint8Array: 1 where a live document has the id */
  Napi::Value Live(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto ids = strArray(info[0]);
    auto st = snapshot();
    Napi::Uint8Array out = Napi::Uint8Array::New(env, ids.size());
    for (size_t i = 0; i < ids.size(); i++) {
      const std::string& id = ids[i];
      uint8_t live = 0;
      if (st->mem->pos.count(id)) live = 1;
      else if (!st->mem->deleted.count(id)) {
        for (const auto& sv : st->segs) {
          int64_t d = sv->seg->lookup(id);
          if (d >= 0 && !sv->isDeleted(uint32_t(d))) { live = 1; break; }
        }
      }
      out[i] = live;
    }
    return out;
  }

  /** locate(ids) -> Uint32Array per segment: the not-deleted local docs with these ids */
  Napi::Value Locate(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto ids = strArray(info[0]);
    auto st = snapshot();
    Napi::Array out = Napi::Array::New(env, st->segs.size());
    for (size_t s = 0; s < st->segs.size(); s++) {
      const SegView& sv = *st->segs[s];
      std::vector<uint32_t> found;
      for (const auto& id : ids) {
        int64_t d = sv.seg->lookup(id);
        if (d >= 0 && !sv.isDeleted(uint32_t(d))) found.push_back(uint32_t(d));
      }
      std::sort(found.begin(), found.end());
      found.erase(std::unique(found.begin(), found.end()), found.end());
      Napi::Uint32Array a = Napi::Uint32Array::New(env, found.size());
      for (size_t i = 0; i < found.size(); i++) a[i] = found[i];
      out.Set(uint32_t(s), a);
    }
    return out;
  }

  /** pin() -> an opaque handle holding the current snapshot (segments stay mapped while it lives) */
  Napi::Value Pin(const Napi::CallbackInfo& info) {
    auto* held = new std::shared_ptr<const State>(snapshot());
    return Napi::External<std::shared_ptr<const State>>::New(info.Env(), held,
        [](Napi::Env, std::shared_ptr<const State>* p) { delete p; });
  }

  /**
   * ids(pinned, pos, max) -> { ids: string[], next }: up to max live ids of the pinned snapshot from position
   * pos (0 first; positions run over the segments' local documents, then the WAL tail's documents); next is
   * the position to continue from, or -1 when every id has been returned. Each live id appears once.
   */
  Napi::Value Ids(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsExternal()) throw Napi::TypeError::New(env, "ids: first argument must come from pin()");
    const State& st = **info[0].As<Napi::External<std::shared_ptr<const State>>>().Data();
    double pos = info[1].As<Napi::Number>().DoubleValue();
    const uint32_t max = std::max<uint32_t>(1, info[2].As<Napi::Number>().Uint32Value());
    std::vector<std::string_view> out;
    out.reserve(std::min<uint32_t>(max, 65536));
    double base = 0;
    double next = -1;
    for (const auto& svp : st.segs) {
      const SegView& sv = *svp;
      const uint32_t n = sv.seg->ndocs();
      if (pos < base + n) {
        for (uint32_t d = static_cast<uint32_t>(pos - base); d < n; d++) {
          if (out.size() >= max) { next = base + d; break; }
          if (sv.isDeleted(d) || (!sv.hidden.empty() && sv.isHidden(d))) continue;
          out.push_back(sv.seg->id(d));
        }
        if (next >= 0) break;
        pos = base + n;
      }
      base += n;
    }
    if (next < 0) {
      const auto& docs = st.mem->docs;
      for (size_t i = static_cast<size_t>(std::max(0.0, pos - base)); i < docs.size(); i++) {
        if (out.size() >= max) { next = base + double(i); break; }
        out.push_back(docs[i]->id);
      }
    }
    Napi::Array a = Napi::Array::New(env, out.size());
    for (size_t i = 0; i < out.size(); i++) a.Set(uint32_t(i), Napi::String::New(env, out[i].data(), out[i].size()));
    Napi::Object o = Napi::Object::New(env);
    o.Set("ids", a);
    o.Set("next", next);
    return o;
  }

  Napi::Value Count(const Napi::CallbackInfo& info) {
    auto st = snapshot();
    double n = double(st->mem->docs.size());
    for (const auto& sv : st->segs) n += sv->live();
    return Napi::Number::New(info.Env(), n);
  }

  Napi::Value Stats(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto st = snapshot();
    Napi::Object o = Napi::Object::New(env);
    Napi::Array segs = Napi::Array::New(env, st->segs.size());
    for (size_t i = 0; i < st->segs.size(); i++) {
      const SegView& sv = *st->segs[i];
      const Segment& s = *sv.seg;
      Napi::Object x = Napi::Object::New(env);
      x.Set("path", s.path());
      x.Set("docs", double(s.ndocs()));
      x.Set("deleted", double(sv.del ? sv.del->ndeleted : 0));
      x.Set("hidden", double(sv.hidden.size()));
      x.Set("live", double(sv.live()));
      x.Set("nnz", double(s.nnz()));
      x.Set("bytes", double(s.fileBytes()));
      x.Set("postingsBytes", double(s.postingsBytes()));
      x.Set("forwardBytes", double(s.forwardBytes()));
      x.Set("lists", double(s.h().nlists));
      x.Set("blocks", double(s.h().nblocks));
      segs.Set(uint32_t(i), x);
    }
    o.Set("segments", segs);
    o.Set("memDocs", double(st->mem->docs.size()));
    o.Set("memDeleted", double(st->mem->deleted.size()));
    o.Set("memNnz", double(st->mem->nnz));
    return o;
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    auto st = std::make_shared<State>();
    st->mem = std::make_shared<MemTable>();
    {
      std::lock_guard<std::mutex> g(mu_);
      state_ = st;
    }
    cache_.clear();
    return info.Env().Undefined();
  }

  uint32_t width_ = 0;
  // Scores' scratch (the event loop's: scores is synchronous): a dense query row, all zero between calls, and room
  // for one document's decoded values.
  std::vector<float> dense_;
  std::vector<uint32_t> touched_;
  std::mutex mu_;
  std::shared_ptr<const State> state_;
  std::map<std::string, CachedSeg> cache_;
};

}  // namespace

Napi::Function defineView(Napi::Env env) { return View::Init(env); }

}  // namespace scdv::js
