// The store addon's N-API conversions (addon_js.h): error mapping, documents, options, queries, results.
#include "addon_js.h"

#include <cmath>

namespace scdv::js {

Napi::Error toJsError(Napi::Env env, const std::exception& e) {
  Napi::Error err = Napi::Error::New(env, e.what());
  if (auto* se = dynamic_cast<const StoreError*>(&e)) {
    if (!se->code.empty()) err.Set("code", Napi::String::New(env, se->code == "ENOENT" ? "ENOENT" : "SCDV_STORE_" + se->code));
    for (const auto& [name, value] : se->fields) err.Set(name, Napi::String::New(env, value));
  }
  return err;
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

PackedDocs PackedDocs::from(const Napi::Object& o) {
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

std::vector<BuildDoc> PackedDocs::buildDocs() const {
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

Query Query::from(const Napi::CallbackInfo& info, uint32_t width) {
  Query q;
  auto idx = info[0].As<Napi::Uint32Array>();
  auto val = info[1].As<Napi::Float32Array>();
  if (idx.ElementLength() != val.ElementLength()) throw StoreError("query: indices and values differ in length");
  q.idx.assign(idx.Data(), idx.Data() + idx.ElementLength());
  q.val.assign(val.Data(), val.Data() + val.ElementLength());
  for (size_t j = 0; j < q.idx.size(); j++) {
    if (q.idx[j] >= width || (j > 0 && q.idx[j] <= q.idx[j - 1])) throw StoreError("query: indices must be strictly increasing and below the width");
  }
  q.readOptions(info[2].As<Napi::Object>());
  return q;
}

void Query::readOptions(const Napi::Object& o) {
  Query& q = *this;
  q.p.k = o.Get("k").As<Napi::Number>().Uint32Value();
  q.p.exact = o.Get("exact").ToBoolean();
  if (o.Get("budget").IsNumber()) q.p.budget = o.Get("budget").As<Napi::Number>().DoubleValue();
  if (o.Get("candidates").IsNumber()) q.p.candidates = o.Get("candidates").As<Napi::Number>().Uint32Value();
  if (o.Get("certified").IsNumber()) q.p.certified = o.Get("certified").As<Napi::Number>().Uint32Value();
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
  if (q.p.certified > q.p.k) throw StoreError("certified must not exceed k");
}

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
    s.Set("candidates", double(st->candidates));
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

}  // namespace scdv::js
