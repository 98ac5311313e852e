// Character classes, UTF-8 decoding and MeCab feature-field scanning for the scdv_mecab addon (all inline: per token).
#pragma once
#include <cstdint>
#include <string>

namespace scdv_mecab {

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

inline bool IsWordChar(uint32_t c) {
  return IsDigit(c) || IsKanji(c) || IsHiragana(c) || IsKatakana(c) || IsLetter(c);
}

// Start of the last code point of [begin, end) (end > begin).
inline const unsigned char* LastCodePointStart(const unsigned char* begin, const unsigned char* end) {
  const unsigned char* p = end - 1;
  while (p > begin && (*p & 0xC0) == 0x80) --p;
  return p;
}

// Decodes one UTF-8 sequence; malformed bytes yield U+FFFD and advance by one byte.
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

}  // namespace scdv_mecab
