// View.searchRerankedAsync: the related list's whole re-ranking (rerank.h) on the store's search threads
// (search_queue.h), from one snapshot; the event loop only converts the answer (the kept hits with their metadata
// text, the dropped records).
#include "addon_js.h"
#include "rerank.h"
#include "result_fields.h"
#include "search_queue.h"

namespace scdv::js {

namespace {

class RerankSearch : public SearchJob {
 public:
  // byId: the query is the stored vector of the live document `id` (q's vector unused), looked up in Execute.
  // fields: each kept hit's result item fields as UTF-8 JSON text (result_fields.h) where provable, its metadata text
  // only where not: the event loop then neither decodes nor parses the metadata of most hits, and the answer's bytes
  // are copied, not encoded.
  RerankSearch(Napi::Env env, std::shared_ptr<const State> st, uint32_t width, Query q, RerankSpec spec, bool byId, std::string id,
               bool fields)
      : SearchJob(env), st_(std::move(st)), width_(width), q_(std::move(q)), spec_(spec), byId_(byId), id_(std::move(id)),
        fields_(fields) {}
  void Execute() override {
    if (byId_) r_ = searchRerankedById(*st_, width_, id_, q_.f, q_.p, spec_, found_);
    else r_ = searchReranked(*st_, width_, q_.idx.data(), q_.val.data(), static_cast<uint32_t>(q_.idx.size()), q_.f, q_.p, spec_);
    if (fields_) {
      fieldsText_.resize(r_.hits.size());
      fieldsOk_.resize(r_.hits.size());
      for (size_t i = 0; i < r_.hits.size(); i++) fieldsOk_[i] = resultFields(r_.hits[i].meta, fieldsText_[i]);
    }
  }
  Napi::Value Result(Napi::Env env) override {
    if (!found_) return env.Null();
    const auto s = [&](std::string_view v) { return Napi::String::New(env, v.data(), v.size()); };
    const uint32_t n = static_cast<uint32_t>(r_.hits.size());
    Napi::Array ids = Napi::Array::New(env, n);
    Napi::Array metas = Napi::Array::New(env, n);
    Napi::Float64Array scores = Napi::Float64Array::New(env, n);
    // fields: {bytes, offsets}: hit i's fields are bytes[offsets[i], offsets[i + 1]) when metas[i] is not set.
    std::string all;
    Napi::Uint32Array offsets = fields_ ? Napi::Uint32Array::New(env, n + 1) : Napi::Uint32Array();
    for (uint32_t i = 0; i < n; i++) {
      ids.Set(i, s(r_.hits[i].id));
      if (fields_) offsets[i] = static_cast<uint32_t>(all.size());
      if (fields_ && fieldsOk_[i]) all += fieldsText_[i];
      else metas.Set(i, s(r_.hits[i].meta));
      scores[i] = r_.hits[i].score;
    }
    const uint32_t m = static_cast<uint32_t>(r_.dropped.size());
    Napi::Array dIds = Napi::Array::New(env, m);
    Napi::Array dOf = Napi::Array::New(env, m);
    Napi::Float64Array dSim = Napi::Float64Array::New(env, m);
    for (uint32_t i = 0; i < m; i++) {
      const DroppedHit& d = r_.dropped[i];
      dIds.Set(i, s(d.id));
      dOf.Set(i, d.hasOf ? Napi::Value(s(d.of)) : env.Null());
      dSim[i] = d.similarity;
    }
    Napi::Object o = Napi::Object::New(env);
    o.Set("ids", ids);
    o.Set("scores", scores);
    o.Set("metas", metas);
    if (fields_) {
      offsets[n] = static_cast<uint32_t>(all.size());
      Napi::Object f = Napi::Object::New(env);
      f.Set("bytes", Napi::Buffer<char>::Copy(env, all.data(), all.size()));
      f.Set("offsets", offsets);
      o.Set("fields", f);
    }
    o.Set("droppedIds", dIds);
    o.Set("droppedOf", dOf);
    o.Set("droppedSimilarity", dSim);
    o.Set("searched", r_.searched);
    o.Set("fetched", r_.fetched);
    return o;
  }

 private:
  std::shared_ptr<const State> st_;  // holds the segments the result's strings point into
  uint32_t width_;
  Query q_;
  RerankSpec spec_;
  bool byId_;
  std::string id_;
  bool found_ = true;
  bool fields_;
  std::vector<std::string> fieldsText_;
  std::vector<bool> fieldsOk_;
  RerankResult r_;
};

uint32_t u32(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  if (!v.IsNumber()) throw Napi::TypeError::New(o.Env(), std::string("searchRerankedAsync: spec.") + key + " must be a number");
  return v.As<Napi::Number>().Uint32Value();
}

// The spec argument ({want, maxK, head, threshold: number | null, fbDocs, fbWeight, fields?}) of a query whose first pool is k.
RerankSpec specFrom(const Napi::Value& v, uint32_t k) {
  Napi::Env env = v.Env();
  if (!v.IsObject()) throw Napi::TypeError::New(env, "searchRerankedAsync: spec must be an object");
  Napi::Object o = v.As<Napi::Object>();
  RerankSpec spec;
  spec.want = u32(o, "want");
  spec.maxK = u32(o, "maxK");
  spec.head = u32(o, "head");
  spec.fbDocs = u32(o, "fbDocs");
  spec.fbWeight = o.Get("fbWeight").IsNumber() ? o.Get("fbWeight").As<Napi::Number>().DoubleValue() : 0.0;
  spec.collapse = o.Get("threshold").IsNumber();
  if (spec.collapse) spec.threshold = o.Get("threshold").As<Napi::Number>().DoubleValue();
  if (spec.want == 0 || spec.maxK < k) throw StoreError("searchRerankedAsync: want must be positive and maxK at least k");
  return spec;
}

Napi::Value queue(Napi::Env env, std::shared_ptr<const State> st, uint32_t width, Query q, RerankSpec spec, bool byId, std::string id,
                  bool fields) {
  return queueSearchJob(env, std::make_unique<RerankSearch>(env, std::move(st), width, std::move(q), spec, byId, std::move(id), fields));
}

}  // namespace

Napi::Value queueSearchReranked(const Napi::CallbackInfo& info, std::shared_ptr<const State> st, uint32_t width) {
  Query q = Query::from(info, width);
  const RerankSpec spec = specFrom(info[3], q.p.k);
  return queue(info.Env(), std::move(st), width, std::move(q), spec, false, {}, info[3].As<Napi::Object>().Get("fields").ToBoolean());
}

Napi::Value queueSearchRerankedById(const Napi::CallbackInfo& info, std::shared_ptr<const State> st, uint32_t width) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) throw Napi::TypeError::New(env, "searchRerankedByIdAsync: id must be a string");
  if (!info[1].IsObject()) throw Napi::TypeError::New(env, "searchRerankedByIdAsync: opts must be an object");
  Query q;
  q.readOptions(info[1].As<Napi::Object>());
  const RerankSpec spec = specFrom(info[2], q.p.k);
  return queue(env, std::move(st), width, std::move(q), spec, true, info[0].As<Napi::String>().Utf8Value(),
               info[2].As<Napi::Object>().Get("fields").ToBoolean());
}

}  // namespace scdv::js
