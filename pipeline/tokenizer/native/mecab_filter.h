// The token filter of the scdv_mecab addon: part-of-speech rules, stop words and noise checks (inline: per token).
#pragma once
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "mecab_text.h"

namespace scdv_mecab {

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
  bool foldLongVowels = false;  // コンピューター -> コンピュータ (FoldLongVowel)
  bool joinNouns = false;       // adjacent kept nouns also give their concatenation as a token
  size_t maxTokenBytes = std::numeric_limits<size_t>::max();

  // Longest matching prefix decides; a prefix matches on a field boundary only.
  bool KeepPos(const char* feature) const {
    const PosTrie::Decision d = pos.Match(feature);
    return d == PosTrie::kNone ? keepUnmatched : d == PosTrie::kKeep;
  }

  // Character-level checks on the final token text. Called per token: always_inline keeps it inside
  // Core::Tokenize (-O2 does not inline a function this size once it has external linkage).
  [[gnu::always_inline]] bool KeepText(std::string_view tok) const {
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

// Katakana spelling variants with and without a final long-vowel mark (コンピューター / コンピュータ,
// サーバー / サーバ) are one word: a token of katakana only, at least 4 characters long and ending in ー loses
// that ー (Lucene's JapaneseKatakanaStemFilter rule; shorter words such as キー or ツアー keep it).
// Returns the new byte length of the token in [data, data + len).
inline size_t FoldLongVowel(const char* data, size_t len) {
  constexpr size_t kMarkBytes = 3;  // U+30FC in UTF-8: E3 83 BC
  if (len < 4 * kMarkBytes) return len;
  const auto* b = reinterpret_cast<const unsigned char*>(data);
  if (b[len - 3] != 0xE3 || b[len - 2] != 0x83 || b[len - 1] != 0xBC) return len;
  const unsigned char* p = b;
  const unsigned char* end = b + len;
  size_t count = 0;
  while (p < end) {
    const uint32_t c = NextCodePoint(p, end);
    if (!(c >= 0x30A1 && c <= 0x30FC && c != 0x30FB)) return len;  // full-width katakana and ー only
    ++count;
  }
  return count >= 4 ? len - kMarkBytes : len;
}

}  // namespace scdv_mecab
