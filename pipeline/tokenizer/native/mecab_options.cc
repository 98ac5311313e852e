// Option parsing of the scdv_mecab addon: the filter spec, the dictionary and user dictionaries, JS strings in.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "mecab_core.h"
#include "mecab_pages.h"

namespace scdv_mecab {

[[noreturn]] void ThrowType(Napi::Env env, const std::string& msg) {
  throw Napi::TypeError::New(env, msg);
}

namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> StringArray(Napi::Env env, Napi::Value v, const char* name,
                                     bool allowEmptyStrings) {
  if (!v.IsArray()) ThrowType(env, std::string(name) + " must be an array of strings");
  Napi::Array arr = v.As<Napi::Array>();
  std::vector<std::string> out;
  out.reserve(arr.Length());
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    Napi::Value item = arr.Get(i);
    if (!item.IsString()) ThrowType(env, std::string(name) + " must be an array of strings");
    std::string s = item.As<Napi::String>().Utf8Value();
    if (s.empty() && !allowEmptyStrings) {
      ThrowType(env, std::string(name) + " must not contain empty strings");
    }
    out.push_back(std::move(s));
  }
  return out;
}

bool OptionalBool(Napi::Env env, Napi::Object o, const char* key, bool fallback) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return fallback;
  if (!v.IsBoolean()) ThrowType(env, std::string("filter.") + key + " must be a boolean");
  return v.As<Napi::Boolean>().Value();
}

Filter ParseFilter(Napi::Env env, Napi::Value value) {
  Filter f;
  if (value.IsUndefined()) {
    f.keepUnmatched = true;  // no filter: keep every token
    return f;
  }
  if (!value.IsObject() || value.IsArray() || value.IsFunction()) {
    ThrowType(env, "options.filter must be an object");
  }
  Napi::Object o = value.As<Napi::Object>();
  static const char* const kKeys[] = {"keepPos", "dropPos", "stopwords", "singleChar",
                                      "dropDigitsOnly", "dropNumberCounters", "dropSymbolsOnly",
                                      "lowercase", "maxTokenBytes", "foldLongVowels", "joinNouns"};
  Napi::Array names = o.GetPropertyNames();
  for (uint32_t i = 0; i < names.Length(); ++i) {
    const std::string k = names.Get(i).ToString().Utf8Value();
    if (std::none_of(std::begin(kKeys), std::end(kKeys), [&](const char* s) { return k == s; })) {
      ThrowType(env, "unknown option filter." + k);
    }
  }

  Napi::Value keep = o.Get("keepPos");
  Napi::Value drop = o.Get("dropPos");
  f.keepUnmatched = keep.IsUndefined();
  if (!keep.IsUndefined()) {
    for (auto& p : StringArray(env, keep, "filter.keepPos", false)) f.pos.Add(p, true);
  }
  if (!drop.IsUndefined()) {
    for (auto& p : StringArray(env, drop, "filter.dropPos", false)) f.pos.Add(p, false);
  }

  f.lowercase = OptionalBool(env, o, "lowercase", false);
  f.dropDigitsOnly = OptionalBool(env, o, "dropDigitsOnly", false);
  f.dropNumberCounters = OptionalBool(env, o, "dropNumberCounters", false);
  f.dropSymbolsOnly = OptionalBool(env, o, "dropSymbolsOnly", false);
  f.foldLongVowels = OptionalBool(env, o, "foldLongVowels", false);
  f.joinNouns = OptionalBool(env, o, "joinNouns", false);

  Napi::Value stop = o.Get("stopwords");
  if (!stop.IsUndefined()) {
    for (std::string s : StringArray(env, stop, "filter.stopwords", true)) {
      // Tokens are compared after lowercasing, so 'TOP' must still match 'top'.
      if (f.lowercase) {
        for (char& c : s) if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
      }
      // Tokens are folded before the check, so stop words are folded the same way.
      if (f.foldLongVowels) s.resize(FoldLongVowel(s.data(), s.size()));
      f.stopwordStore.insert(std::move(s));
    }
    for (const std::string& s : f.stopwordStore) f.stopwords.insert(std::string_view(s));
  }

  Napi::Value sc = o.Get("singleChar");
  if (!sc.IsUndefined()) {
    const std::string mode = sc.IsString() ? sc.As<Napi::String>().Utf8Value() : "";
    if (mode == "none") f.singleChar = SingleChar::kNone;
    else if (mode == "hiragana") f.singleChar = SingleChar::kHiragana;
    else if (mode == "non-kanji") f.singleChar = SingleChar::kNonKanji;
    else if (mode == "all") f.singleChar = SingleChar::kAll;
    else ThrowType(env, "filter.singleChar must be 'none', 'hiragana', 'non-kanji' or 'all'");
  }

  Napi::Value mx = o.Get("maxTokenBytes");
  if (!mx.IsUndefined()) {
    const double d = mx.IsNumber() ? mx.As<Napi::Number>().DoubleValue() : -1;
    if (d == std::numeric_limits<double>::infinity()) {
      f.maxTokenBytes = std::numeric_limits<size_t>::max();
    } else if (!(d >= 1) || d != static_cast<double>(static_cast<uint64_t>(d)) || d > 9.0e15) {
      ThrowType(env, "filter.maxTokenBytes must be a positive integer");
    } else {
      f.maxTokenBytes = static_cast<size_t>(d);
    }
  }
  return f;
}

// Builds the Model with the argc/argv form. "--rcfile=/dev/null": MeCab 0.996 always
// loads an rc file before the dictionary's dicrc (-r, else ~/.mecabrc, $MECABRC or
// /etc/mecabrc, failing if absent); an empty one makes us independent of the system
// config, and --dicdir (a command-line value) wins over any dicdir from rc files anyway.
// Long "--opt=value" forms keep paths that start with '-' from being read as options.
ModelPtr CreateModel(Napi::Env env, const std::string& dicdir,
                     const std::vector<std::string>& userdic) {
  std::vector<std::string> args = {"scdv_mecab", "--rcfile=/dev/null", "--dicdir=" + dicdir};
  if (!userdic.empty()) {
    std::string list;
    for (const std::string& u : userdic) {
      if (u.find(',') != std::string::npos) {
        throw Napi::Error::New(env, "user dictionary path must not contain ',': " + u);
      }
      if (!IsRegularFile(u)) throw Napi::Error::New(env, "user dictionary not found: " + u);
      if (!list.empty()) list.push_back(',');
      list += u;
    }
    args.push_back("--userdic=" + list);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ModelPtr model(MeCab::createModel(static_cast<int>(args.size()), argv.data()));
  if (!model) {
    const char* err = MeCab::getLastError();
    throw Napi::Error::New(env, std::string("MeCab could not load the dictionary in ") + dicdir +
                                    ": " + (err && *err ? err : "unknown error"));
  }
  return model;
}

std::string RealPath(const std::string& p) {
  char* r = ::realpath(p.c_str(), nullptr);
  if (!r) return p;
  std::string out(r);
  std::free(r);
  return out;
}

std::string SystemDictionaryFile(const MeCab::Model& model) {
  for (const MeCab::DictionaryInfo* d = model.dictionary_info(); d; d = d->next) {
    if (d->type == MECAB_SYS_DIC && d->filename) return d->filename;
  }
  return "";
}

// One model per dictionary folder and user dictionaries in this process, shared by every tagger made for them
// (the embedding threads', the libuv pool's): a Model is thread-safe, and the index is loaded and moved into huge
// pages once. Entries go when their last tagger does.
std::mutex registryLock;
std::map<std::string, std::weak_ptr<SharedModel>> registry;

std::shared_ptr<SharedModel> ModelFor(Napi::Env env, const std::string& dicdir, const std::vector<std::string>& userdic,
                                      bool hugePages) {
  std::string key = RealPath(dicdir);
  for (const std::string& u : userdic) key += "\n" + RealPath(u);
  std::lock_guard<std::mutex> hold(registryLock);
  std::shared_ptr<SharedModel> shared = registry[key].lock();
  if (!shared) {
    // The model's own mapping of sys.dic is the one that was not there before it loaded (loads are serialised here).
    const std::string sysDic = RealPath(dicdir + "/sys.dic");
    const std::vector<Mapping> before = MappingsOf(sysDic);
    shared = std::make_shared<SharedModel>();
    shared->model = CreateModel(env, dicdir, userdic);
    for (const Mapping& m : MappingsOf(SystemDictionaryFile(*shared->model))) {
      const bool old = std::any_of(before.begin(), before.end(), [&](const Mapping& b) { return b.start == m.start; });
      if (!old) shared->index = m;
    }
    const size_t movable = MovableIndexBytes(shared->index);
    if (movable > 0) shared->moveAfterBytes = movable / 32;
    registry[key] = shared;
  }
  if (hugePages) shared->wantHugePages.store(true);
  return shared;
}

}  // namespace

std::shared_ptr<const Core> CreateCore(Napi::Env env, Napi::Value options) {
  if (!options.IsObject() || options.IsArray() || options.IsFunction()) {
    ThrowType(env, "options must be an object");
  }
  Napi::Object o = options.As<Napi::Object>();
  Napi::Value dv = o.Get("dicdir");
  if (!dv.IsString()) ThrowType(env, "options.dicdir must be a string");
  std::string dicdir = dv.As<Napi::String>().Utf8Value();
  if (dicdir.empty()) ThrowType(env, "options.dicdir must not be empty");
  std::vector<std::string> userdic;
  Napi::Value uv = o.Get("userdic");
  if (!uv.IsUndefined()) userdic = StringArray(env, uv, "options.userdic", false);
  Filter filter = ParseFilter(env, o.Get("filter"));
  Napi::Value hp = o.Get("hugePages");
  if (!hp.IsUndefined() && !hp.IsBoolean()) ThrowType(env, "options.hugePages must be a boolean");
  const bool hugePages = hp.IsBoolean() && hp.As<Napi::Boolean>().Value();

  if (!IsDirectory(dicdir)) {
    throw Napi::Error::New(env, "MeCab dictionary folder not found (or not a folder): " + dicdir);
  }
  std::string dir = dicdir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (!IsRegularFile(dir + "/sys.dic")) {
    throw Napi::Error::New(env, "not a compiled MeCab dictionary: " + dicdir + " has no sys.dic");
  }

  std::shared_ptr<SharedModel> model = ModelFor(env, dicdir, userdic, hugePages);
  TaggerPtr tagger(model->model->createTagger());
  if (!tagger) {
    const char* err = MeCab::getLastError();
    throw Napi::Error::New(env, std::string("MeCab could not create a tagger: ") + (err ? err : ""));
  }
  auto core = std::make_shared<const Core>(std::move(model), std::move(tagger), std::move(filter));
  // Tokens are matched and returned as UTF-8; another charset would give mojibake.
  const MeCab::DictionaryInfo* sys = core->SystemDictionary();
  std::string cs = sys && sys->charset ? sys->charset : "";
  for (char& c : cs) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (cs != "utf-8" && cs != "utf8") {
    throw Napi::Error::New(env, "MeCab dictionary " + dicdir + " is encoded as '" + cs +
                                    "', not UTF-8; compile it with -t utf-8");
  }
  return core;
}

// Copies a JS string's UTF-8 bytes into *buf with a single V8 pass; a UTF-16 unit
// never needs more than 3 UTF-8 bytes, so 3*length+1 always suffices. Returns the size.
size_t ReadUtf8(Napi::Env env, Napi::Value v, const char* name, std::string* buf) {
  if (!v.IsString()) ThrowType(env, std::string(name) + " must be a string");
  size_t units = 0;
  napi_status st = napi_get_value_string_utf16(env, v, nullptr, 0, &units);
  NAPI_THROW_IF_FAILED(env, st, 0);
  const size_t need = units * 3 + 1;
  if (buf->size() < need) buf->resize(need);
  size_t written = 0;
  st = napi_get_value_string_utf8(env, v, buf->data(), buf->size(), &written);
  NAPI_THROW_IF_FAILED(env, st, 0);
  return written;
}

}  // namespace scdv_mecab
