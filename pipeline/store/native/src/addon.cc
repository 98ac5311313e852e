// N-API surface of scdv_store. JavaScript owns files, locks, the WAL and manifests (pipeline/store/engine.js);
// this addon owns the data structures and the compute:
//   View            one process's snapshot-based view of a collection (segments + WAL tail) and its search
//   buildSegment*   write a segment from documents; mergeSegmentsAsync: live documents of segments into one
//   flock*          advisory whole-file locks; segment* helpers used by flush and merge
// Files: addon.cc (this: module init; segment building, merging, segment helpers, flock), addon_view.cc (View),
// addon_js.h/.cc (argument and result conversions, the error guard).
#include <napi.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "addon_js.h"
#include "search_queue.h"
#include "fwd_codec.h"
#include "search.h"
#include "segment.h"
#include "util.h"

using namespace scdv;
using namespace scdv::js;

namespace {

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
  o.Set("forwardBytes", double(s.forwardBytes()));
  o.Set("lists", double(s.h().nlists));
  o.Set("blocks", double(s.h().nblocks));
  Napi::Array t = Napi::Array::New(env, s.h().ntiers);
  for (uint32_t i = 0; i < s.h().ntiers; i++) t.Set(i, double(s.h().tierFrac[i]));
  o.Set("tiers", t);
  o.Set("version", double(s.h().version));
  // Where the bytes are (BENCHMARKS.md "Index size"), and the postings in blocks of each gap layout.
  const SegHeader& h = s.h();
  Napi::Object sec = Napi::Object::New(env);
  sec.Set("forwardGaps", double(h.len[S_FWDIDX]));
  sec.Set("forwardValues", double(h.len[S_FWDVAL]));
  sec.Set("forwardTables", double(h.len[S_FWDOFF] + h.len[S_FWDIDXOFF] + h.len[S_FWDSCALE]));
  sec.Set("blockData", double(h.len[S_PDATA]));
  sec.Set("blockTable", double(h.len[S_BLOCKS]));
  sec.Set("listTables", double(h.len[S_LISTS] + h.len[S_DIMLISTS]));
  o.Set("sections", sec);
  Napi::Object layouts = Napi::Object::New(env);
  for (uint64_t b = 0; b < h.nblocks; b++) {
    const std::string key = std::to_string(s.blocks()[b].bits);
    const double had = layouts.Has(key) ? layouts.Get(key).As<Napi::Number>().DoubleValue() : 0;
    layouts.Set(key, had + double(s.blocks()[b].cntm1) + 1);
  }
  o.Set("postingsByGapLayout", layouts);
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

/** Tests: halvesToFloats(Uint16Array, dispatched) -> Float32Array by the run-time choice (true) or the scalar path. */
Napi::Value HalvesToFloats(const Napi::CallbackInfo& info) {
  Napi::Uint16Array h = info[0].As<Napi::Uint16Array>();
  Napi::Float32Array out = Napi::Float32Array::New(info.Env(), h.ElementLength());
  if (info[1].ToBoolean()) halvesToFloats(h.Data(), out.Data(), h.ElementLength());
  else halvesToFloatsScalar(h.Data(), out.Data(), h.ElementLength());
  return out;
}

/** Tests: codesToFloats(Uint8Array packed 11-bit codes, first, n, dispatched) -> Float32Array (SSE4.1 or scalar path). */
Napi::Value CodesToFloats(const Napi::CallbackInfo& info) {
  Napi::Uint8Array b = info[0].As<Napi::Uint8Array>();
  const uint64_t first = info[1].As<Napi::Number>().Int64Value(), n = info[2].As<Napi::Number>().Int64Value();
  // The decoders read up to kFwdPad bytes past the last code, as in a segment: the caller's array must have them.
  if (codeBytes(first + n) + kFwdPad > b.ByteLength()) throw StoreError("codesToFloats: the array is too short", "QUERY_INVALID");
  Napi::Float32Array out = Napi::Float32Array::New(info.Env(), n);
  if (info[3].ToBoolean()) codesToFloats(b.Data(), first, out.Data(), n);
  else codesToFloatsScalar(b.Data(), first, out.Data(), n);
  return out;
}

/** Tests: segmentPostingSums(path, Uint32Array indices, Float32Array values) -> Float32Array (search.h postingSums). */
Napi::Value SegmentPostingSums(const Napi::CallbackInfo& info) {
  Segment s(str(info[0]));
  Napi::Uint32Array qi = info[1].As<Napi::Uint32Array>();
  Napi::Float32Array qv = info[2].As<Napi::Float32Array>();
  if (qi.ElementLength() != qv.ElementLength()) throw StoreError("segmentPostingSums: indices and values differ in length", "QUERY_INVALID");
  std::vector<float> acc = postingSums(s, qi.Data(), qv.Data(), static_cast<uint32_t>(qi.ElementLength()));
  Napi::Float32Array out = Napi::Float32Array::New(info.Env(), acc.size());
  std::copy(acc.begin(), acc.end(), out.Data());
  return out;
}

/**
 * mapFile(path) -> ArrayBuffer: a read-only file's bytes, memory-mapped copy-on-write (the pages are the OS page cache,
 * shared with every process; a write through the buffer stays private to this process and never reaches the file).
 * Unmapped when the buffer is collected. The file must be replaced by renaming, not rewritten in place (model files are).
 */
Napi::Value MapFile(const Napi::CallbackInfo& info) {
  const std::string path = str(info[0]);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throwErrno("cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throwErrno("cannot stat", path);
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return Napi::ArrayBuffer::New(info.Env(), 0);
  }
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) throwErrno("cannot map", path);
  return Napi::ArrayBuffer::New(info.Env(), p, size, [](Napi::Env, void* data, size_t* len) {
    ::munmap(data, *len);
    delete len;
  }, new size_t(size));
}

/** Tests: candidateSelect(Float32Array acc, Uint32Array docs, k) -> Uint32Array (search.h). */
Napi::Value CandidateSelect(const Napi::CallbackInfo& info) {
  Napi::Float32Array a = info[0].As<Napi::Float32Array>();
  Napi::Uint32Array d = info[1].As<Napi::Uint32Array>();
  if (a.ElementLength() != d.ElementLength()) throw StoreError("candidateSelect: lengths differ", "QUERY_INVALID");
  const std::vector<uint32_t> o = candidateSelect(a.Data(), d.Data(), a.ElementLength(), static_cast<size_t>(std::max<int64_t>(0, info[2].As<Napi::Number>().Int64Value())));
  Napi::Uint32Array out = Napi::Uint32Array::New(info.Env(), o.size());
  std::copy(o.begin(), o.end(), out.Data());
  return out;
}

/** Tests: candidateOrder(Float32Array acc, Uint32Array docs, step, reads[]) -> Uint32Array (search.h). */
Napi::Value CandidateOrder(const Napi::CallbackInfo& info) {
  Napi::Float32Array a = info[0].As<Napi::Float32Array>();
  Napi::Uint32Array d = info[1].As<Napi::Uint32Array>();
  if (a.ElementLength() != d.ElementLength()) throw StoreError("candidateOrder: lengths differ", "QUERY_INVALID");
  const size_t step = static_cast<size_t>(std::max<int64_t>(1, info[2].As<Napi::Number>().Int64Value()));
  Napi::Array r = info[3].As<Napi::Array>();
  std::vector<size_t> reads;
  for (uint32_t i = 0; i < r.Length(); i++) reads.push_back(static_cast<size_t>(std::max<int64_t>(0, r.Get(i).As<Napi::Number>().Int64Value())));
  const std::vector<uint32_t> o = candidateOrder(a.Data(), d.Data(), a.ElementLength(), step, reads);
  Napi::Uint32Array out = Napi::Uint32Array::New(info.Env(), o.size());
  std::copy(o.begin(), o.end(), out.Data());
  return out;
}

/** Tests: setSimd(on) -> whether SIMD paths are now used (never on a CPU without them). */
Napi::Value SetSimd(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), setSimd(info[0].ToBoolean())); }
/** Tests: setSpeculativeCandidates(on) -> the state (search.h). */
Napi::Value SetSpeculativeCandidates(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), setSpeculativeCandidates(info[0].ToBoolean()));
}
/** Tests: setIdleCores(c) fixes the automatic thread choice's idle-core estimate at c (negative: measure again); idleCores() reads it. */
Napi::Value SetIdleCores(const Napi::CallbackInfo& info) {
  setIdleCores(info[0].As<Napi::Number>().DoubleValue());
  return info.Env().Undefined();
}
Napi::Value IdleCores(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), idleCoresEstimate()); }

/** setSearchThreads(n): at most n threads run the async searches (search_queue.h); set once at load by native.js. */
Napi::Value SetSearchThreads(const Napi::CallbackInfo& info) {
  const double n = info[0].As<Napi::Number>().DoubleValue();
  if (!(n >= 1 && n <= 4096)) throw StoreError("setSearchThreads: a whole number from 1 to 4096", "QUERY_INVALID");
  setSearchThreads(static_cast<uint32_t>(n));
  return info.Env().Undefined();
}
/** searchThreadUse() -> {limit, threads, running, queued, mostRunning} (tests, diagnostics). */
Napi::Value SearchThreadUse(const Napi::CallbackInfo& info) {
  const SearchQueueUse u = searchQueueUse();
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("limit", u.limit);
  o.Set("threads", u.threads);
  o.Set("running", u.running);
  o.Set("queued", u.queued);
  o.Set("mostRunning", u.mostRunning);
  return o;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("View", defineView(env));
  exports.Set("buildSegment", Napi::Function::New(env, Guarded<BuildSegmentSync>));
  exports.Set("buildSegmentAsync", Napi::Function::New(env, Guarded<BuildSegmentAsync>));
  exports.Set("mergeSegmentsAsync", Napi::Function::New(env, Guarded<MergeSegmentsAsync>));
  exports.Set("segmentIds", Napi::Function::New(env, Guarded<SegmentIds>));
  exports.Set("segmentLookup", Napi::Function::New(env, Guarded<SegmentLookup>));
  exports.Set("segmentInfo", Napi::Function::New(env, Guarded<SegmentInfo>));
  exports.Set("flock", Napi::Function::New(env, Guarded<Flock>));
  exports.Set("flockAsync", Napi::Function::New(env, Guarded<FlockAsync>));
  exports.Set("formatVersion", Napi::Number::New(env, kSegVersion));
  exports.Set("halvesToFloats", Napi::Function::New(env, Guarded<HalvesToFloats>));
  exports.Set("codesToFloats", Napi::Function::New(env, Guarded<CodesToFloats>));
  exports.Set("segmentPostingSums", Napi::Function::New(env, Guarded<SegmentPostingSums>));
  exports.Set("mapFile", Napi::Function::New(env, Guarded<MapFile>));
  exports.Set("setSimd", Napi::Function::New(env, Guarded<SetSimd>));
  exports.Set("setSpeculativeCandidates", Napi::Function::New(env, Guarded<SetSpeculativeCandidates>));
  exports.Set("candidateOrder", Napi::Function::New(env, Guarded<CandidateOrder>));
  exports.Set("candidateSelect", Napi::Function::New(env, Guarded<CandidateSelect>));
  exports.Set("setIdleCores", Napi::Function::New(env, Guarded<SetIdleCores>));
  exports.Set("idleCores", Napi::Function::New(env, Guarded<IdleCores>));
  exports.Set("setSearchThreads", Napi::Function::New(env, Guarded<SetSearchThreads>));
  exports.Set("searchThreadUse", Napi::Function::New(env, Guarded<SearchThreadUse>));
  exports.Set("hardwareThreads", Napi::Number::New(env, std::max(1u, std::thread::hardware_concurrency())));
  return exports;
}

}  // namespace

NODE_API_MODULE(scdv_store, Init)
