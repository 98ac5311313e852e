// scdv_mecab: MeCab binding that tokenises, filters and packs in C++, so that each
// document crosses the JS boundary as exactly one string.
//
// Threading model (mecab.h): one Model and one Tagger per NativeTagger, shared by the
// main thread and the libuv pool; Tagger::parse(Lattice*) is thread safe when every
// call or worker uses its own Lattice. The string-returning Tagger::parse methods keep
// state in the Tagger and are never used here.

#include <napi.h>
#include <mecab.h>

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace {

// ---------------------------------------------------------------------------------
// MeCab handles

struct ModelDeleter {
  void operator()(MeCab::Model* m) const { MeCab::deleteModel(m); }
};
struct TaggerDeleter {
  void operator()(MeCab::Tagger* t) const { MeCab::deleteTagger(t); }
};
struct LatticeDeleter {
  void operator()(MeCab::Lattice* l) const { MeCab::deleteLattice(l); }
};
using ModelPtr = std::unique_ptr<MeCab::Model, ModelDeleter>;
using TaggerPtr = std::unique_ptr<MeCab::Tagger, TaggerDeleter>;
using LatticePtr = std::unique_ptr<MeCab::Lattice, LatticeDeleter>;

// ---------------------------------------------------------------------------------
// Character classes (code points)

inline bool IsKanji(uint32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0xF900 && c <= 0xFAFF) || c == 0x3005 || (c >= 0x20000 && c <= 0x2FFFF);
}
inline bool IsHiragana(uint32_t c) { return c >= 0x3041 && c <= 0x309F; }
// U+30A0 (゠) and U+30FB (・) sit in the katakana block but are punctuation, so they
// do not make a token "wordy" (・ is a digit separator below).
inline bool IsKatakana(uint32_t c) {
  return ((c >= 0x30A1 && c <= 0x30FF) && c != 0x30FB) || (c >= 0x31F0 && c <= 0x31FF) ||
         (c >= 0xFF66 && c <= 0xFF9F);
}
inline bool IsLetter(uint32_t c) {
  if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  return (c >= 0xC0 && c <= 0x24F && c != 0xD7 && c != 0xF7) ||  // Latin-1 + Extended A/B
         (c >= 0x370 && c <= 0x3FF) ||                            // Greek
         (c >= 0x400 && c <= 0x52F) ||                            // Cyrillic (+ supplement)
         (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0x1100 && c <= 0x11FF) ||
         (c >= 0x3130 && c <= 0x318F) ||                          // Hangul
         (c >= 0xFF21 && c <= 0xFF3A) || (c >= 0xFF41 && c <= 0xFF5A);  // full-width Latin
}
inline bool IsKanjiNumeral(uint32_t c) {
  switch (c) {
    case 0x3007: case 0x4E00: case 0x4E8C: case 0x4E09: case 0x56DB: case 0x4E94:
    case 0x516D: case 0x4E03: case 0x516B: case 0x4E5D: case 0x5341: case 0x767E:
    case 0x5343: case 0x4E07: case 0x5104: case 0x5146:
      return true;  // 〇一二三四五六七八九十百千万億兆
    default:
      return false;
  }
}
inline bool IsDigit(uint32_t c) {
  return (c >= '0' && c <= '9') || (c >= 0xFF10 && c <= 0xFF19) || IsKanjiNumeral(c);
}
inline bool IsDigitSeparator(uint32_t c) {
  return c == ',' || c == '.' || c == 0x30FB || c == 0xFF0C || c == 0xFF0E || c == 0xFF65;
}

// Decodes one UTF-8 sequence; malformed bytes yield U+FFFD and advance by one byte.
inline bool IsWordChar(uint32_t c) {
  return IsDigit(c) || IsKanji(c) || IsHiragana(c) || IsKatakana(c) || IsLetter(c);
}

// Start of the last code point of [begin, end) (end > begin).
inline const unsigned char* LastCodePointStart(const unsigned char* begin, const unsigned char* end) {
  const unsigned char* p = end - 1;
  while (p > begin && (*p & 0xC0) == 0x80) --p;
  return p;
}

inline uint32_t NextCodePoint(const unsigned char*& p, const unsigned char* end) {
  const unsigned char b = *p++;
  if (b < 0x80) return b;
  int extra;
  uint32_t cp;
  if ((b & 0xE0) == 0xC0) { extra = 1; cp = b & 0x1F; }
  else if ((b & 0xF0) == 0xE0) { extra = 2; cp = b & 0x0F; }
  else if ((b & 0xF8) == 0xF0) { extra = 3; cp = b & 0x07; }
  else return 0xFFFD;
  if (end - p < extra) return 0xFFFD;
  for (int i = 0; i < extra; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0xFFFD;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  p += extra;
  return cp;
}

// ---------------------------------------------------------------------------------
// Feature string helpers. Features are CSV: mecab-dict-index quotes fields that
// contain ',' or '"' (neologd has such base forms), so field scanning honours quotes.

// Returns a pointer just past the field that starts at p (at ',' or '\0').
inline const char* SkipField(const char* p) {
  if (*p == '"') {
    ++p;
    while (*p) {
      if (*p == '"') {
        if (p[1] == '"') { p += 2; continue; }
        ++p;
        break;
      }
      ++p;
    }
  }
  while (*p && *p != ',') ++p;
  return p;
}

// Start of field `index` (0-based), or nullptr when the feature has fewer fields.
inline const char* FieldStart(const char* f, int index) {
  for (int i = 0; i < index; ++i) {
    f = SkipField(f);
    if (*f != ',') return nullptr;
    ++f;
  }
  return f;
}

// Appends the (unquoted) value of the field starting at p.
inline void AppendField(const char* p, std::string* out) {
  if (*p != '"') {
    const char* e = p;
    while (*e && *e != ',') ++e;
    out->append(p, e - p);
    return;
  }
  for (++p; *p; ++p) {
    if (*p == '"') {
      if (p[1] != '"') return;
      ++p;  // "" -> "
    }
    out->push_back(*p);
  }
}

// ---------------------------------------------------------------------------------
// Filter

enum class SingleChar { kNone, kHiragana, kNonKanji, kAll };

// Keep/drop prefixes as a trie over feature fields, so that the longest-prefix rule
// costs one short comparison per field instead of one strncmp per rule.
class PosTrie {
 public:
  enum Decision : int8_t { kNone = -1, kDrop = 0, kKeep = 1 };

  // An identical prefix in keepPos and dropPos counts as a drop.
  void Add(std::string_view prefix, bool keep) {
    Node* n = &root_;
    for (;;) {
      const size_t comma = prefix.find(',');
      const std::string_view field = prefix.substr(0, comma);
      Node* child = n->Find(field);
      if (!child) {
        n->children.push_back({std::string(field), std::make_unique<Node>()});
        child = n->children.back().second.get();
      }
      n = child;
      if (comma == std::string_view::npos) break;
      prefix.remove_prefix(comma + 1);
    }
    n->decision = (n->decision == kDrop || !keep) ? kDrop : kKeep;
  }

  // Decision of the longest rule matching whole leading fields of feature.
  Decision Match(const char* feature) const {
    Decision best = kNone;
    const Node* n = &root_;
    const char* p = feature;
    while (!n->children.empty()) {
      const char* e = p;
      while (*e && *e != ',') ++e;  // POS fields are never quoted
      n = n->Find(std::string_view(p, e - p));
      if (!n) break;
      if (n->decision != kNone) best = n->decision;
      if (*e != ',') break;
      p = e + 1;
    }
    return best;
  }

 private:
  struct Node {
    Decision decision = kNone;
    std::vector<std::pair<std::string, std::unique_ptr<Node>>> children;

    Node* Find(std::string_view field) const {
      for (const auto& c : children) {
        if (c.first.size() == field.size() &&
            std::memcmp(c.first.data(), field.data(), field.size()) == 0) {
          return c.second.get();
        }
      }
      return nullptr;
    }
  };
  Node root_;
};

struct Filter {
  Filter() = default;
  Filter(Filter&&) = default;  // moving keeps the stopwordStore nodes, so the views stay valid
  Filter& operator=(Filter&&) = default;
  Filter(const Filter&) = delete;  // a copy would point its views at the source's strings
  Filter& operator=(const Filter&) = delete;

  PosTrie pos;
  bool keepUnmatched = false;  // true only when keepPos was not given at all
  std::unordered_set<std::string> stopwordStore;
  std::unordered_set<std::string_view> stopwords;  // views into stopwordStore (stable nodes)
  SingleChar singleChar = SingleChar::kNone;
  bool dropDigitsOnly = false;
  bool dropNumberCounters = false;
  bool dropSymbolsOnly = false;
  bool lowercase = false;
  size_t maxTokenBytes = std::numeric_limits<size_t>::max();

  // Longest matching prefix decides; a prefix matches on a field boundary only.
  bool KeepPos(const char* feature) const {
    const PosTrie::Decision d = pos.Match(feature);
    return d == PosTrie::kNone ? keepUnmatched : d == PosTrie::kKeep;
  }

  // Character-level checks on the final token text.
  bool KeepText(std::string_view tok) const {
    if (tok.empty() || tok.size() > maxTokenBytes) return false;
    const auto* p = reinterpret_cast<const unsigned char*>(tok.data());
    const auto* end = p + tok.size();
    size_t count = 0;
    bool onlyDigits = true, anyDigit = false, anyWord = false;
    uint32_t first = 0;
    // Number + counter ("6月", "33歳", "100万円"): leading digits, then 1-2 kanji/kana and nothing else.
    bool inNumber = true;
    size_t counterChars = 0;
    bool counterIsKana = true;
    while (p < end) {
      const uint32_t c = NextCodePoint(p, end);
      if (count++ == 0) first = c;
      const bool digit = IsDigit(c);
      anyDigit |= digit;
      onlyDigits &= digit || IsDigitSeparator(c);
      anyWord |= digit || IsKanji(c) || IsHiragana(c) || IsKatakana(c) || IsLetter(c);
      if (inNumber && !(digit || (count > 1 && IsDigitSeparator(c)))) inNumber = false;
      if (!inNumber) {
        ++counterChars;
        counterIsKana &= IsKanji(c) || IsHiragana(c) || IsKatakana(c);
      }
    }
    if (count == 1) {
      switch (singleChar) {
        case SingleChar::kAll: return false;
        case SingleChar::kHiragana: if (IsHiragana(first)) return false; break;
        case SingleChar::kNonKanji: if (!IsKanji(first)) return false; break;
        case SingleChar::kNone: break;
      }
    }
    if (dropDigitsOnly && onlyDigits && anyDigit) return false;
    if (dropNumberCounters && IsDigit(first) && counterChars >= 1 && counterChars <= 2 && counterIsKana) return false;
    if (dropSymbolsOnly && !anyWord) return false;
    return stopwords.find(tok) == stopwords.end();
  }
};

// ---------------------------------------------------------------------------------
// Core: the shared MeCab state, usable from any thread (all methods are const).

class Core {
 public:
  Core(ModelPtr model, TaggerPtr tagger, Filter filter)
      : model_(std::move(model)), tagger_(std::move(tagger)), filter_(std::move(filter)) {}

  LatticePtr NewLattice() const {
    LatticePtr lattice(model_->createLattice());
    if (!lattice) throw std::runtime_error("MeCab: cannot create a lattice");
    return lattice;
  }

  void Parse(MeCab::Lattice* lattice, const char* text, size_t len) const {
    lattice->set_sentence(text, len);
    if (!tagger_->parse(lattice)) {
      const char* what = lattice->what();
      throw std::runtime_error(std::string("MeCab parse failed: ") + (what ? what : "unknown error"));
    }
  }

  // Appends kept tokens of text to *out (which the caller cleared).
  void Tokenize(MeCab::Lattice* lattice, const char* text, size_t len, bool withPos,
                std::string* out) const {
    Parse(lattice, text, len);
    // Features live in the mmapped dictionary and Viterbi never touched them, so reading
    // them is mostly cache misses: prefetch a few nodes ahead.
    constexpr int kPrefetchDistance = 8;
    const MeCab::Node* ahead = lattice->bos_node();
    for (int i = 0; i < kPrefetchDistance && ahead; ++i, ahead = ahead->next) {
      __builtin_prefetch(ahead->feature);
    }
    for (const MeCab::Node* node = lattice->bos_node(); node; node = node->next) {
      if (ahead) {
        __builtin_prefetch(ahead->feature);
        ahead = ahead->next;
      }
      if (node->stat == MECAB_BOS_NODE || node->stat == MECAB_EOS_NODE) continue;
      const char* feature = node->feature;
      if (!feature || !filter_.KeepPos(feature)) continue;
      const size_t mark = out->size();
      if (mark) out->push_back(withPos ? '\n' : ' ');
      const size_t start = out->size();
      AppendToken(node, feature, out);
      if (!filter_.KeepText(std::string_view(out->data() + start, out->size() - start))) {
        out->resize(mark);
        continue;
      }
      if (withPos) AppendPos(feature, out);
    }
  }

  const char* RawParse(MeCab::Lattice* lattice, const char* text, size_t len) const {
    Parse(lattice, text, len);
    const char* s = lattice->toString();
    if (!s) throw std::runtime_error(std::string("MeCab: ") + lattice->what());
    return s;
  }

  const MeCab::DictionaryInfo* SystemDictionary() const {
    const MeCab::DictionaryInfo* first = model_->dictionary_info();
    for (const MeCab::DictionaryInfo* d = first; d; d = d->next) {
      if (d->type == MECAB_SYS_DIC) return d;
    }
    return first;
  }

 private:
  // Base form (field 6) unless '*' or missing, then the surface; then whitespace -> '_'
  // and optional ASCII lowercasing, in place at the end of *out.
  void AppendToken(const MeCab::Node* node, const char* feature, std::string* out) const {
    const size_t start = out->size();
    const char* base = FieldStart(feature, 6);
    if (base && *base && *base != ',' && !(base[0] == '*' && (base[1] == ',' || base[1] == '\0'))) {
      AppendField(base, out);
      TrimAddedPunctuation(node, start, out);
    }
    if (out->size() == start) out->append(node->surface, node->length);
    char* p = &(*out)[start];
    char* const end = out->data() + out->size();
    for (; p < end; ++p) {
      const char c = *p;
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') *p = '_';
      else if (filter_.lowercase && c >= 'A' && c <= 'Z') *p = static_cast<char>(c + 32);
    }
  }

  // Some neologd entries carry punctuation in the base form that the surface lacks (surface 涙,
  // base form 涙。): trailing non-word characters of the base form are dropped unless the surface
  // ends with the same character.
  static void TrimAddedPunctuation(const MeCab::Node* node, size_t start, std::string* out) {
    if (node->length == 0) return;
    const auto* sBegin = reinterpret_cast<const unsigned char*>(node->surface);
    const unsigned char* sLast = LastCodePointStart(sBegin, sBegin + node->length);
    const unsigned char* sp = sLast;
    const uint32_t surfaceLast = NextCodePoint(sp, sBegin + node->length);
    for (;;) {
      if (out->size() <= start) return;
      const auto* b = reinterpret_cast<const unsigned char*>(out->data());
      const unsigned char* last = LastCodePointStart(b + start, b + out->size());
      const unsigned char* q = last;
      const uint32_t c = NextCodePoint(q, b + out->size());
      if (IsWordChar(c) || c == surfaceLast) return;
      out->resize(static_cast<size_t>(last - b));
    }
  }

  // "\t" + the first four feature fields, verbatim.
  static void AppendPos(const char* feature, std::string* out) {
    const char* p = feature;
    for (int i = 0; i < 4; ++i) {
      p = SkipField(p);
      if (*p != ',' || i == 3) break;
      ++p;
    }
    out->push_back('\t');
    out->append(feature, p - feature);
  }

  ModelPtr model_;  // declared first: destroyed after the tagger that uses it
  TaggerPtr tagger_;
  Filter filter_;
};

// ---------------------------------------------------------------------------------
// Option parsing

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

[[noreturn]] void ThrowType(Napi::Env env, const std::string& msg) {
  throw Napi::TypeError::New(env, msg);
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
                                      "lowercase", "maxTokenBytes"};
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

  Napi::Value stop = o.Get("stopwords");
  if (!stop.IsUndefined()) {
    for (std::string s : StringArray(env, stop, "filter.stopwords", true)) {
      // Tokens are compared after lowercasing, so 'TOP' must still match 'top'.
      if (f.lowercase) {
        for (char& c : s) if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
      }
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

  if (!IsDirectory(dicdir)) {
    throw Napi::Error::New(env, "MeCab dictionary folder not found (or not a folder): " + dicdir);
  }
  std::string dir = dicdir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (!IsRegularFile(dir + "/sys.dic")) {
    throw Napi::Error::New(env, "not a compiled MeCab dictionary: " + dicdir + " has no sys.dic");
  }

  ModelPtr model = CreateModel(env, dicdir, userdic);
  TaggerPtr tagger(model->createTagger());
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
                        InstanceAccessor<&NativeTagger::DictionaryInfo>("dictionaryInfo")});
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
