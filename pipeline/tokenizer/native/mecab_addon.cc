// scdv_mecab: MeCab binding that tokenises, filters and packs in C++, so that each
// document crosses the JS boundary as exactly one string.
//
// Threading model (mecab.h): one Model and one Tagger per NativeTagger, shared by the
// main thread and the libuv pool; Tagger::parse(Lattice*) is thread safe when every
// call or worker uses its own Lattice. The string-returning Tagger::parse methods keep
// state in the Tagger and are never used here.
//
// Files: mecab_addon.cc (this: the JS class and the async batch), mecab_core.h (Core), mecab_options.cc
// (options), mecab_filter.h (token filter), mecab_text.h (characters, UTF-8, feature fields). A thread's scheduling
// (SCHED_BATCH, paced sections) is the scdv_threads addon's (pipeline/threads/native/).

#include <napi.h>
#include <mecab.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mecab_core.h"

namespace {

using namespace scdv_mecab;

// ---------------------------------------------------------------------------------
// Async batch

class BatchWorker : public Napi::AsyncWorker {
 public:
  BatchWorker(Napi::Env env, std::shared_ptr<const Core> core, std::vector<std::string> texts,
              bool withPos)
      : Napi::AsyncWorker(env, "scdv_mecab.tokenizeBatch"),
        deferred_(Napi::Promise::Deferred::New(env)),
        core_(std::move(core)),
        texts_(std::move(texts)),
        withPos_(withPos) {}

  Napi::Promise Promise() const { return deferred_.Promise(); }

  void Execute() override {
    try {
      LatticePtr lattice = core_->NewLattice();
      results_.resize(texts_.size());
      for (size_t i = 0; i < texts_.size(); ++i) {
        core_->Tokenize(lattice.get(), texts_[i].data(), texts_[i].size(), withPos_, &results_[i]);
        std::string().swap(texts_[i]);  // release input memory early
      }
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::Array out = Napi::Array::New(env, results_.size());
    for (size_t i = 0; i < results_.size(); ++i) {
      out.Set(static_cast<uint32_t>(i), Napi::String::New(env, results_[i].data(), results_[i].size()));
    }
    deferred_.Resolve(out);
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::shared_ptr<const Core> core_;  // keeps Model/Tagger alive even if the JS object is GC'd
  std::vector<std::string> texts_;
  std::vector<std::string> results_;
  bool withPos_;
};

// ---------------------------------------------------------------------------------
// JS class

class NativeTagger : public Napi::ObjectWrap<NativeTagger> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "NativeTagger",
                       {InstanceMethod<&NativeTagger::Tokenize>("tokenize"),
                        InstanceMethod<&NativeTagger::TokenizeWithPos>("tokenizeWithPos"),
                        InstanceMethod<&NativeTagger::TokenizeBatch>("tokenizeBatch"),
                        InstanceMethod<&NativeTagger::Parse>("parse"),
                        InstanceAccessor<&NativeTagger::DictionaryInfo>("dictionaryInfo"),
                        InstanceAccessor<&NativeTagger::HugePageBytes>("hugePageBytes")});
  }

  explicit NativeTagger(const Napi::CallbackInfo& info) : Napi::ObjectWrap<NativeTagger>(info) {
    core_ = CreateCore(info.Env(), info[0]);
  }

 private:
  Napi::Value Tokenize(const Napi::CallbackInfo& info) { return TokenizeSync(info, false); }
  Napi::Value TokenizeWithPos(const Napi::CallbackInfo& info) { return TokenizeSync(info, true); }

  Napi::Value TokenizeSync(const Napi::CallbackInfo& info, bool withPos) {
    Napi::Env env = info.Env();
    const size_t len = ReadUtf8(env, info[0], "text", &input_);
    LatticePtr lattice = core_->NewLattice();
    output_.clear();
    core_->Tokenize(lattice.get(), input_.data(), len, withPos, &output_);
    Napi::String result = Napi::String::New(env, output_.data(), output_.size());
    TrimBuffers();
    return result;
  }

  Napi::Value Parse(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const size_t len = ReadUtf8(env, info[0], "text", &input_);
    LatticePtr lattice = core_->NewLattice();
    const char* raw = core_->RawParse(lattice.get(), input_.data(), len);
    Napi::String result = Napi::String::New(env, raw);
    TrimBuffers();
    return result;
  }

  Napi::Value TokenizeBatch(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsArray()) ThrowType(env, "texts must be an array of strings");
    bool withPos = false;
    if (!info[1].IsUndefined()) {
      if (!info[1].IsBoolean()) ThrowType(env, "withPos must be a boolean");
      withPos = info[1].As<Napi::Boolean>().Value();
    }
    Napi::Array arr = info[0].As<Napi::Array>();
    std::vector<std::string> texts(arr.Length());
    for (uint32_t i = 0; i < arr.Length(); ++i) {
      // Via the scratch buffer, so each copy is allocated at its exact size.
      const size_t n = ReadUtf8(env, arr.Get(i), "texts[i]", &input_);
      texts[i].assign(input_.data(), n);
    }
    TrimBuffers();
    auto* worker = new BatchWorker(env, core_, std::move(texts), withPos);  // owned by libuv; self-deletes
    Napi::Promise promise = worker->Promise();
    worker->Queue();
    return promise;
  }

  Napi::Value DictionaryInfo(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const MeCab::DictionaryInfo* d = core_->SystemDictionary();
    if (!d) return env.Null();
    Napi::Object o = Napi::Object::New(env);
    o.Set("filename", Napi::String::New(env, d->filename ? d->filename : ""));
    o.Set("charset", Napi::String::New(env, d->charset ? d->charset : ""));
    o.Set("size", Napi::Number::New(env, d->size));
    o.Set("version", Napi::Number::New(env, d->version));
    return o;
  }

  Napi::Value HugePageBytes(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(core_->HugePageBytes()));
  }

  // Keep reusable buffers, but do not pin memory after one huge document.
  void TrimBuffers() {
    constexpr size_t kKeep = 8u << 20;
    if (input_.capacity() > kKeep) std::string().swap(input_);
    if (output_.capacity() > kKeep) std::string().swap(output_);
  }

  std::shared_ptr<const Core> core_;
  std::string input_;   // main-thread scratch for sync calls
  std::string output_;
};

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("NativeTagger", NativeTagger::Define(env));
  exports.Set("mecabVersion", Napi::String::New(env, MeCab::Model::version()));
  return exports;
}

}  // namespace

NODE_API_MODULE(scdv_mecab, Init)
