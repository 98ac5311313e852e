// N-API surface of scdv_store. JavaScript owns files, locks, the WAL and manifests (pipeline/store/engine.js);
// this addon owns the data structures and the compute:
//   View            one process's snapshot-based view of a collection (segments + WAL tail) and its search
//   buildSegment*   write a segment from documents; mergeSegmentsAsync: live documents of segments into one
//   flock*          advisory whole-file locks; segment* helpers used by flush and merge
#include <napi.h>

#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>

#include "search.h"
#include "segment.h"
#include "util.h"

using namespace scdv;

namespace {

Napi::Error toJsError(Napi::Env env, const std::exception& e) {
  Napi::Error err = Napi::Error::New(env, e.what());
  if (auto* se = dynamic_cast<const StoreError*>(&e)) {
    if (!se->code.empty()) err.Set("code", Napi::String::New(env, se->code == "ENOENT" ? "ENOENT" : "SCDV_STORE_" + se->code));
  }
  return err;
}

/**
 * Every binding runs through this: a C++ exception (StoreError, bad_alloc, …) becomes a JS error carrying the
 * store's code, instead of terminating the process (node-addon-api itself only catches Napi::Error).
 */
template <typename Body>
Napi::Value guarded(Napi::Env env, Body&& body) {
  try {
    return body();
  } catch (const Napi::Error&) {
    throw;
  } catch (const std::exception& e) {
    throw toJsError(env, e);
  }
}

template <Napi::Value (*F)(const Napi::CallbackInfo&)>
Napi::Value Guarded(const Napi::CallbackInfo& info) {
  return guarded(info.Env(), [&] { return F(info); });
}

std::string str(const Napi::Value& v) { return v.As<Napi::String>().Utf8Value(); }

std::vector<std::string> strArray(const Napi::Value& v) {
  std::vector<std::string> out;
  if (!v.IsArray()) return out;
  Napi::Array a = v.As<Napi::Array>();
  out.reserve(a.Length());
  for (uint32_t i = 0; i < a.Length(); i++) {
    Napi::Value x = a.Get(i);
    out.push_back(x.IsString() ? x.As<Napi::String>().Utf8Value() : std::string());
  }
  return out;
}

/** Documents handed over from JavaScript, owned (strings and arrays copied). */
struct PackedDocs {
  std::vector<std::string> ids, metas, sites, cats;
  std::vector<double> times;
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> indices;
  std::vector<float> values;

  static PackedDocs from(const Napi::Object& o) {
    PackedDocs p;
    p.ids = strArray(o.Get("ids"));
    p.metas = strArray(o.Get("metas"));
    p.sites = strArray(o.Get("sites"));
    p.cats = strArray(o.Get("cats"));
    const size_t n = p.ids.size();
    if (p.metas.size() != n || p.sites.size() != n || p.cats.size() != n) throw StoreError("packed documents: column lengths differ");
    auto times = o.Get("times").As<Napi::Float64Array>();
    auto offs = o.Get("offsets").As<Napi::Float64Array>();
    auto idx = o.Get("indices").As<Napi::Uint32Array>();
    auto val = o.Get("values").As<Napi::Float32Array>();
    if (times.ElementLength() != n || offs.ElementLength() != n + 1 || idx.ElementLength() != val.ElementLength()) {
      throw StoreError("packed documents: array lengths differ");
    }
    p.times.assign(times.Data(), times.Data() + n);
    p.offsets.resize(n + 1);
    for (size_t i = 0; i <= n; i++) p.offsets[i] = static_cast<uint64_t>(offs[i]);
    if (p.offsets[0] != 0 || p.offsets[n] != idx.ElementLength()) throw StoreError("packed documents: bad offsets");
    for (size_t i = 0; i < n; i++) if (p.offsets[i] > p.offsets[i + 1]) throw StoreError("packed documents: bad offsets");
    p.indices.assign(idx.Data(), idx.Data() + idx.ElementLength());
    p.values.assign(val.Data(), val.Data() + val.ElementLength());
    return p;
  }
  static int64_t time(double t) { return std::isfinite(t) ? static_cast<int64_t>(t) : kNoTime; }
  std::vector<BuildDoc> buildDocs() const {
    std::vector<BuildDoc> docs(ids.size());
    for (size_t i = 0; i < ids.size(); i++) {
      BuildDoc& d = docs[i];
      d.id = ids[i];
      d.meta = metas[i];
      d.site = sites[i];
      d.cat = cats[i];
      d.time = time(times[i]);
      d.idx = indices.data() + offsets[i];
      d.idxBytes = 4;
      d.val = values.data() + offsets[i];
      d.nnz = static_cast<uint32_t>(offsets[i + 1] - offsets[i]);
    }
    return docs;
  }
};

BuildOptions buildOptions(const Napi::Value& v) {
  BuildOptions o;
  if (!v.IsObject()) return o;
  Napi::Object obj = v.As<Napi::Object>();
  if (obj.Has("tiers") && obj.Get("tiers").IsArray()) {
    Napi::Array a = obj.Get("tiers").As<Napi::Array>();
    o.tierFrac.clear();
    for (uint32_t i = 0; i < a.Length(); i++) o.tierFrac.push_back(a.Get(i).As<Napi::Number>().FloatValue());
  }
  if (obj.Has("minTierList") && obj.Get("minTierList").IsNumber()) o.minTierList = obj.Get("minTierList").As<Napi::Number>().Uint32Value();
  return o;
}

Napi::Object buildResult(Napi::Env env, const BuildResult& r) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("docs", double(r.docs));
  o.Set("nnz", double(r.nnz));
  o.Set("bytes", double(r.bytes));
  o.Set("postingsBytes", double(r.postingsBytes));
  return o;
}

/** Search options, copied from the (already validated) JavaScript object. */
struct Query {
  std::vector<uint32_t> idx;
  std::vector<float> val;
  Filters f;
  SearchParams p;
  bool wantStats = false;

  static Query from(const Napi::CallbackInfo& info, uint32_t width) {
    Query q;
    auto idx = info[0].As<Napi::Uint32Array>();
    auto val = info[1].As<Napi::Float32Array>();
    if (idx.ElementLength() != val.ElementLength()) throw StoreError("query: indices and values differ in length");
    q.idx.assign(idx.Data(), idx.Data() + idx.ElementLength());
    q.val.assign(val.Data(), val.Data() + val.ElementLength());
    for (size_t j = 0; j < q.idx.size(); j++) {
      if (q.idx[j] >= width || (j > 0 && q.idx[j] <= q.idx[j - 1])) throw StoreError("query: indices must be strictly increasing and below the width");
    }
    Napi::Object o = info[2].As<Napi::Object>();
    q.p.k = o.Get("k").As<Napi::Number>().Uint32Value();
    q.p.exact = o.Get("exact").ToBoolean();
    if (o.Get("budget").IsNumber()) q.p.budget = o.Get("budget").As<Napi::Number>().DoubleValue();
    if (o.Get("candidates").IsNumber()) q.p.candidates = o.Get("candidates").As<Napi::Number>().Uint32Value();
    if (o.Get("threads").IsNumber()) q.p.threads = std::min(64u, o.Get("threads").As<Napi::Number>().Uint32Value());
    if (o.Get("minPostings").IsNumber()) q.p.minPostings = static_cast<uint64_t>(o.Get("minPostings").As<Napi::Number>().DoubleValue());
    if (o.Get("since").IsNumber()) { q.f.hasSince = true; q.f.since = static_cast<int64_t>(std::ceil(o.Get("since").As<Napi::Number>().DoubleValue())); }
    if (o.Get("until").IsNumber()) { q.f.hasUntil = true; q.f.until = static_cast<int64_t>(std::floor(o.Get("until").As<Napi::Number>().DoubleValue())); }
    if (o.Get("sites").IsArray()) { q.f.hasSites = true; q.f.sites = strArray(o.Get("sites")); }
    q.f.excludeSites = strArray(o.Get("excludeSites"));
    if (o.Get("categories").IsArray()) { q.f.hasCategories = true; q.f.categories = strArray(o.Get("categories")); }
    q.f.excludeIds = strArray(o.Get("excludeIds"));
    q.wantStats = o.Get("stats").ToBoolean();
    if (q.p.k == 0) throw StoreError("k must be positive");
    return q;
  }
};

Napi::Object hitsToJs(Napi::Env env, const std::vector<Hit>& hits, const SearchStats* st) {
  Napi::Object o = Napi::Object::New(env);
  Napi::Array ids = Napi::Array::New(env, hits.size());
  Napi::Array metas = Napi::Array::New(env, hits.size());
  Napi::Float64Array scores = Napi::Float64Array::New(env, hits.size());
  for (size_t i = 0; i < hits.size(); i++) {
    ids.Set(uint32_t(i), Napi::String::New(env, hits[i].id.data(), hits[i].id.size()));
    metas.Set(uint32_t(i), Napi::String::New(env, hits[i].meta.data(), hits[i].meta.size()));
    scores[i] = hits[i].score;
  }
  o.Set("ids", ids);
  o.Set("metas", metas);
  o.Set("scores", scores);
  if (st) {
    Napi::Object s = Napi::Object::New(env);
    s.Set("postings", double(st->postings));
    s.Set("postingsTotal", double(st->postingsTotal));
    s.Set("rescored", double(st->rescored));
    s.Set("segments", double(st->segments));
    s.Set("bruteSegments", double(st->bruteSegments));
    s.Set("earlyExits", double(st->earlyExits));
    s.Set("threads", double(st->threads));
    s.Set("taatMs", st->taatMs);
    s.Set("scanMs", st->scanMs);
    s.Set("rescoreMs", st->rescoreMs);
    o.Set("stats", s);
  }
  return o;
}

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
      InstanceMethod("get", &View::Guard<&View::Get>),
      InstanceMethod("live", &View::Guard<&View::Live>),
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

  Napi::Value Search(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Query q = Query::from(info, width_);
    auto st = snapshot();
    SearchStats stats;
    auto hits = search(*st, width_, q.idx.data(), q.val.data(), static_cast<uint32_t>(q.idx.size()), q.f, q.p, &stats);
    return hitsToJs(env, hits, q.wantStats ? &stats : nullptr);
  }

  class SearchWorker : public Napi::AsyncWorker {
   public:
    SearchWorker(Napi::Env env, std::shared_ptr<const State> st, uint32_t width, Query q)
        : Napi::AsyncWorker(env), st_(std::move(st)), width_(width), q_(std::move(q)), deferred_(Napi::Promise::Deferred::New(env)) {}
    Napi::Promise promise() { return deferred_.Promise(); }
    void Execute() override {
      try {
        hits_ = search(*st_, width_, q_.idx.data(), q_.val.data(), static_cast<uint32_t>(q_.idx.size()), q_.f, q_.p, &stats_);
      } catch (const std::exception& e) {
        SetError(e.what());
      }
    }
    void OnOK() override { deferred_.Resolve(hitsToJs(Env(), hits_, q_.wantStats ? &stats_ : nullptr)); }
    void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }
   private:
    std::shared_ptr<const State> st_;
    uint32_t width_;
    Query q_;
    Napi::Promise::Deferred deferred_;
    std::vector<Hit> hits_;
    SearchStats stats_;
  };

  Napi::Value SearchAsync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Query q = Query::from(info, width_);
    auto* w = new SearchWorker(env, snapshot(), width_, std::move(q));
    Napi::Promise p = w->promise();
    w->Queue();
    return p;
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
    if (st->mem->deleted.count(id)) return env.Null();
    auto it = st->mem->pos.find(id);
    if (it != st->mem->pos.end()) {
      const MemDoc& m = *st->mem->docs[it->second];
      return make(m.meta, m.idx.size(), [&](size_t j) { return m.idx[j]; }, m.val.data());
    }
    for (const auto& sv : st->segs) {
      int64_t d = sv->seg->lookup(id);
      if (d < 0 || sv->isDeleted(static_cast<uint32_t>(d))) continue;
      const Segment& s = *sv->seg;
      uint64_t b = s.fwdBegin(uint32_t(d)), e = s.fwdEnd(uint32_t(d));
      return make(s.meta(uint32_t(d)), e - b, [&](size_t j) { return s.fwdIdx(b + j); }, s.fwdVal() + b);
    }
    return env.Null();
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
      x.Set("forwardBytes", double(s.h().len[S_FWDIDX] + s.h().len[S_FWDVAL] + s.h().len[S_FWDOFF]));
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
  std::mutex mu_;
  std::shared_ptr<const State> state_;
  std::map<std::string, CachedSeg> cache_;
};

// ------------------------------------------------------------------------------------- module functions

Napi::Value BuildSegmentSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string path = str(info[0]);
  uint32_t width = info[1].As<Napi::Number>().Uint32Value();
  PackedDocs p = PackedDocs::from(info[2].As<Napi::Object>());
  BuildOptions o = buildOptions(info[3]);
  auto docs = p.buildDocs();
  return buildResult(env, buildSegment(path, width, docs, o));
}

class BuildWorker : public Napi::AsyncWorker {
 public:
  BuildWorker(Napi::Env env, std::string path, uint32_t width, PackedDocs p, BuildOptions o)
      : Napi::AsyncWorker(env), path_(std::move(path)), width_(width), p_(std::move(p)), o_(std::move(o)), d_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise promise() { return d_.Promise(); }
  void Execute() override {
    try {
      auto docs = p_.buildDocs();
      r_ = buildSegment(path_, width_, docs, o_);
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override { d_.Resolve(buildResult(Env(), r_)); }
  void OnError(const Napi::Error& e) override { d_.Reject(e.Value()); }
 private:
  std::string path_;
  uint32_t width_;
  PackedDocs p_;
  BuildOptions o_;
  BuildResult r_;
  Napi::Promise::Deferred d_;
};

Napi::Value BuildSegmentAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* w = new BuildWorker(env, str(info[0]), info[1].As<Napi::Number>().Uint32Value(),
                            PackedDocs::from(info[2].As<Napi::Object>()), buildOptions(info[3]));
  auto p = w->promise();
  w->Queue();
  return p;
}

class MergeWorker : public Napi::AsyncWorker {
 public:
  MergeWorker(Napi::Env env, std::string out, std::vector<std::pair<std::string, std::string>> in, BuildOptions o)
      : Napi::AsyncWorker(env), out_(std::move(out)), in_(std::move(in)), o_(std::move(o)), d_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise promise() { return d_.Promise(); }
  void Execute() override {
    try {
      std::vector<MergeInput> inputs;
      for (auto& [path, del] : in_) {
        MergeInput m;
        m.seg = std::make_shared<Segment>(path);
        if (!del.empty()) m.del = loadDeletions(del, m.seg->ndocs());
        inputs.push_back(std::move(m));
      }
      r_ = mergeSegments(out_, inputs, o_);
    } catch (const StoreError& e) {
      empty_ = e.code == "EMPTY";
      if (!empty_) SetError(e.what());
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }
  void OnOK() override {
    if (empty_) { d_.Resolve(Env().Null()); return; }
    d_.Resolve(buildResult(Env(), r_));
  }
  void OnError(const Napi::Error& e) override { d_.Reject(e.Value()); }
 private:
  std::string out_;
  std::vector<std::pair<std::string, std::string>> in_;
  BuildOptions o_;
  BuildResult r_;
  bool empty_ = false;
  Napi::Promise::Deferred d_;
};

/** mergeSegmentsAsync(outPath, [{path, delPath}], opts) -> Promise<BuildResult | null> (null: nothing live) */
Napi::Value MergeSegmentsAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::vector<std::pair<std::string, std::string>> in;
  Napi::Array a = info[1].As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); i++) {
    Napi::Object o = a.Get(i).As<Napi::Object>();
    in.emplace_back(str(o.Get("path")), o.Get("delPath").IsString() ? str(o.Get("delPath")) : std::string());
  }
  auto* w = new MergeWorker(env, str(info[0]), std::move(in), buildOptions(info[2]));
  auto p = w->promise();
  w->Queue();
  return p;
}

/** segmentIds(path, Uint32Array locals) -> string[] */
Napi::Value SegmentIds(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Segment s(str(info[0]));
  auto locals = info[1].As<Napi::Uint32Array>();
  Napi::Array out = Napi::Array::New(env, locals.ElementLength());
  for (size_t i = 0; i < locals.ElementLength(); i++) {
    uint32_t d = locals[i];
    if (d >= s.ndocs()) throw StoreError("local doc out of range");
    auto id = s.id(d);
    out.Set(uint32_t(i), Napi::String::New(env, id.data(), id.size()));
  }
  return out;
}

/** segmentLookup(path, ids) -> Float64Array of local numbers (-1: absent) */
Napi::Value SegmentLookup(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Segment s(str(info[0]));
  auto ids = strArray(info[1]);
  Napi::Float64Array out = Napi::Float64Array::New(env, ids.size());
  for (size_t i = 0; i < ids.size(); i++) out[i] = double(s.lookup(ids[i]));
  return out;
}

/** segmentInfo(path) -> { width, docs, nnz, bytes, postingsBytes, forwardBytes, lists, blocks, tiers } */
Napi::Value SegmentInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Segment s(str(info[0]));
  Napi::Object o = Napi::Object::New(env);
  o.Set("width", double(s.width()));
  o.Set("docs", double(s.ndocs()));
  o.Set("nnz", double(s.nnz()));
  o.Set("bytes", double(s.fileBytes()));
  o.Set("postingsBytes", double(s.postingsBytes()));
  o.Set("forwardBytes", double(s.h().len[S_FWDIDX] + s.h().len[S_FWDVAL] + s.h().len[S_FWDOFF]));
  o.Set("lists", double(s.h().nlists));
  o.Set("blocks", double(s.h().nblocks));
  Napi::Array t = Napi::Array::New(env, s.h().ntiers);
  for (uint32_t i = 0; i < s.h().ntiers; i++) t.Set(i, double(s.h().tierFrac[i]));
  o.Set("tiers", t);
  o.Set("version", double(s.h().version));
  return o;
}

int lockOp(const std::string& mode) {
  if (mode == "ex") return LOCK_EX;
  if (mode == "exnb") return LOCK_EX | LOCK_NB;
  if (mode == "sh") return LOCK_SH;
  if (mode == "shnb") return LOCK_SH | LOCK_NB;
  if (mode == "un") return LOCK_UN;
  throw StoreError("unknown lock mode " + mode);
}

/** flock(fd, 'ex' | 'exnb' | 'sh' | 'shnb' | 'un') -> true, or false when a non-blocking lock is busy */
Napi::Value Flock(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd = info[0].As<Napi::Number>().Int32Value();
  int op = lockOp(str(info[1]));
  for (;;) {
    if (::flock(fd, op) == 0) return Napi::Boolean::New(env, true);
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return Napi::Boolean::New(env, false);
    throwErrno("flock", "fd " + std::to_string(fd));
  }
}

class FlockWorker : public Napi::AsyncWorker {
 public:
  FlockWorker(Napi::Env env, int fd, int op) : Napi::AsyncWorker(env), fd_(fd), op_(op), d_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise promise() { return d_.Promise(); }
  void Execute() override {
    for (;;) {
      if (::flock(fd_, op_) == 0) return;
      if (errno == EINTR) continue;
      SetError(std::string("flock: ") + std::strerror(errno));
      return;
    }
  }
  void OnOK() override { d_.Resolve(Env().Undefined()); }
  void OnError(const Napi::Error& e) override { d_.Reject(e.Value()); }
 private:
  int fd_, op_;
  Napi::Promise::Deferred d_;
};

/** flockAsync(fd, 'ex' | 'sh') -> Promise<void>, waiting on the thread pool */
Napi::Value FlockAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* w = new FlockWorker(env, info[0].As<Napi::Number>().Int32Value(), lockOp(str(info[1])));
  auto p = w->promise();
  w->Queue();
  return p;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("View", View::Init(env));
  exports.Set("buildSegment", Napi::Function::New(env, Guarded<BuildSegmentSync>));
  exports.Set("buildSegmentAsync", Napi::Function::New(env, Guarded<BuildSegmentAsync>));
  exports.Set("mergeSegmentsAsync", Napi::Function::New(env, Guarded<MergeSegmentsAsync>));
  exports.Set("segmentIds", Napi::Function::New(env, Guarded<SegmentIds>));
  exports.Set("segmentLookup", Napi::Function::New(env, Guarded<SegmentLookup>));
  exports.Set("segmentInfo", Napi::Function::New(env, Guarded<SegmentInfo>));
  exports.Set("flock", Napi::Function::New(env, Guarded<Flock>));
  exports.Set("flockAsync", Napi::Function::New(env, Guarded<FlockAsync>));
  exports.Set("formatVersion", Napi::Number::New(env, kSegVersion));
  return exports;
}

}  // namespace

NODE_API_MODULE(scdv_store, Init)
