// The store addon's N-API conversions, shared by its binding files: C++ errors to JS errors, arguments in, results out.
#pragma once
#include <napi.h>

#include <cmath>
#include <string>
#include <vector>

#include "search.h"
#include "segment.h"
#include "util.h"

namespace scdv::js {

Napi::Error toJsError(Napi::Env env, const std::exception& e);

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

std::string str(const Napi::Value& v);

/** The strings of a JS array ('' for a non-string element); empty when v is not an array. */
std::vector<std::string> strArray(const Napi::Value& v);

/** Documents handed over from JavaScript, owned (strings and arrays copied). */
struct PackedDocs {
  std::vector<std::string> ids, metas, sites, cats;
  std::vector<double> times;
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> indices;
  std::vector<float> values;

  static PackedDocs from(const Napi::Object& o);
  static int64_t time(double t) { return std::isfinite(t) ? static_cast<int64_t>(t) : kNoTime; }
  std::vector<BuildDoc> buildDocs() const;
};

BuildOptions buildOptions(const Napi::Value& v);

Napi::Object buildResult(Napi::Env env, const BuildResult& r);

/** Search options, copied from the (already validated) JavaScript object. */
struct Query {
  std::vector<uint32_t> idx;
  std::vector<float> val;
  Filters f;
  SearchParams p;
  bool wantStats = false;

  static Query from(const Napi::CallbackInfo& info, uint32_t width);
  /** The options object alone (filters and search parameters): a query whose vector the store looks up itself. */
  void readOptions(const Napi::Object& o);
};

Napi::Object hitsToJs(Napi::Env env, const std::vector<Hit>& hits, const SearchStats* st);

/**
 * searchRerankedAsync(indices, values, opts, spec) of a view's snapshot (addon_rerank.cc): opts as a search's (k: the
 * first pool), spec {want, maxK, head, threshold: number | null, fbDocs, fbWeight}.
 */
Napi::Value queueSearchReranked(const Napi::CallbackInfo& info, std::shared_ptr<const State> st, uint32_t width);

/**
 * searchRerankedByIdAsync(id, opts, spec): the same with the stored vector of the live document `id` as the query,
 * looked up on a search thread; resolves null when no live document has the id.
 */
Napi::Value queueSearchRerankedById(const Napi::CallbackInfo& info, std::shared_ptr<const State> st, uint32_t width);

/** The View class (addon_view.cc). */
Napi::Function defineView(Napi::Env env);

}  // namespace scdv::js
