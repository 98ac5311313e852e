// The scdv_mecab addon's shared MeCab state (Core: parse, filter, pack tokens) and its construction from JS options.
#pragma once
#include <napi.h>
#include <mecab.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "mecab_filter.h"
#include "mecab_pages.h"
#include "mecab_text.h"

namespace scdv_mecab {

// ---------------------------------------------------------------------------------
// MeCab handles

struct TaggerDeleter {
  void operator()(MeCab::Tagger* t) const { MeCab::deleteTagger(t); }
};
struct LatticeDeleter {
  void operator()(MeCab::Lattice* l) const { MeCab::deleteLattice(l); }
};
using TaggerPtr = std::unique_ptr<MeCab::Tagger, TaggerDeleter>;
using LatticePtr = std::unique_ptr<MeCab::Lattice, LatticeDeleter>;

// ---------------------------------------------------------------------------------
// Core: the shared MeCab state, usable from any thread (all methods are const).

class Core {
 public:
  Core(std::shared_ptr<SharedModel> model, TaggerPtr tagger, Filter filter)
      : model_(std::move(model)), tagger_(std::move(tagger)), filter_(std::move(filter)) {}

  LatticePtr NewLattice() const {
    LatticePtr lattice(model_->model->createLattice());
    if (!lattice) throw std::runtime_error("MeCab: cannot create a lattice");
    return lattice;
  }

  void Parse(MeCab::Lattice* lattice, const char* text, size_t len) const {
    lattice->set_sentence(text, len);
    if (!tagger_->parse(lattice)) {
      const char* what = lattice->what();
      throw std::runtime_error(std::string("MeCab parse failed: ") + (what ? what : "unknown error"));
    }
    NoteParsed(model_, len);
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
    // joinNouns: a run of adjacent kept nouns (新型 コロナ ウイルス) also yields the run as one token, after it.
    std::string compound;
    const char* compoundFeature = nullptr;
    int compoundParts = 0;
    const char* prevEnd = nullptr;  // where the run's last noun ends in the text
    for (const MeCab::Node* node = lattice->bos_node(); node; node = node->next) {
      if (ahead) {
        __builtin_prefetch(ahead->feature);
        ahead = ahead->next;
      }
      if (node->stat == MECAB_BOS_NODE || node->stat == MECAB_EOS_NODE) continue;
      const char* feature = node->feature;
      if (!feature || !filter_.KeepPos(feature)) {
        if (compoundParts) FlushCompound(&compound, &compoundParts, compoundFeature, withPos, out);
        continue;
      }
      const bool noun = filter_.joinNouns && IsNoun(feature);
      if (compoundParts && !(noun && node->rlength == node->length && node->surface == prevEnd)) {
        FlushCompound(&compound, &compoundParts, compoundFeature, withPos, out);
      }
      const size_t mark = out->size();
      if (mark) out->push_back(withPos ? '\n' : ' ');
      const size_t start = out->size();
      AppendToken(node, feature, out);
      if (filter_.foldLongVowels) out->resize(start + FoldLongVowel(out->data() + start, out->size() - start));
      if (!filter_.KeepText(std::string_view(out->data() + start, out->size() - start))) {
        out->resize(mark);
        if (compoundParts) FlushCompound(&compound, &compoundParts, compoundFeature, withPos, out);
        continue;
      }
      if (noun) {
        compound.append(out->data() + start, out->size() - start);
        ++compoundParts;
        compoundFeature = feature;
        prevEnd = node->surface + node->length;
      }
      if (withPos) AppendPos(feature, out);
    }
    if (compoundParts) FlushCompound(&compound, &compoundParts, compoundFeature, withPos, out);
  }

  const char* RawParse(MeCab::Lattice* lattice, const char* text, size_t len) const {
    Parse(lattice, text, len);
    const char* s = lattice->toString();
    if (!s) throw std::runtime_error(std::string("MeCab: ") + lattice->what());
    return s;
  }

  const MeCab::DictionaryInfo* SystemDictionary() const {
    const MeCab::DictionaryInfo* first = model_->model->dictionary_info();
    for (const MeCab::DictionaryInfo* d = first; d; d = d->next) {
      if (d->type == MECAB_SYS_DIC) return d;
    }
    return first;
  }

  /** Bytes of the system dictionary's index in huge pages (0: in the file's pages). */
  size_t HugePageBytes() const { return model_->hugePageBytes.load(); }

 private:
  // Base form (field 6) unless '*' or missing, then the surface; then whitespace -> '_'
  // and optional ASCII lowercasing, in place at the end of *out. Per token: always inlined, like KeepText.
  [[gnu::always_inline]] void AppendToken(const MeCab::Node* node, const char* feature, std::string* out) const {
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

  static bool IsNoun(const char* feature) { return std::strncmp(feature, "名詞", std::strlen("名詞")) == 0; }

  // Ends a run of adjacent nouns: two or more parts are appended as one more token (when it passes the text
  // checks), with the part of speech of its last part (the head of a Japanese compound).
  void FlushCompound(std::string* compound, int* parts, const char* feature, bool withPos, std::string* out) const {
    if (*parts >= 2 && filter_.KeepText(*compound)) {
      if (!out->empty()) out->push_back(withPos ? '\n' : ' ');
      out->append(*compound);
      if (withPos) AppendPos(feature, out);
    }
    compound->clear();
    *parts = 0;
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

  std::shared_ptr<SharedModel> model_;  // declared first: destroyed after the tagger that uses it
  TaggerPtr tagger_;
  Filter filter_;
};

// ---------------------------------------------------------------------------------
// Construction from JS options (mecab_options.cc)

[[noreturn]] void ThrowType(Napi::Env env, const std::string& msg);

// Validates options ({ dicdir, userdic?, filter?, hugePages? }) and loads the dictionary (or shares the process's
// model of it).
std::shared_ptr<const Core> CreateCore(Napi::Env env, Napi::Value options);

// Copies a JS string's UTF-8 bytes into *buf with a single V8 pass; a UTF-16 unit
// never needs more than 3 UTF-8 bytes, so 3*length+1 always suffices. Returns the size.
size_t ReadUtf8(Napi::Env env, Napi::Value v, const char* name, std::string* buf);

}  // namespace scdv_mecab
