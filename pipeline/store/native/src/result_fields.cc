// resultFields (result_fields.h): a single pass over the stored metadata JSON text. Anything it is not sure of makes
// it answer false, never a guess: the JavaScript path is the definition.
#include "result_fields.h"

#include <array>
#include <cstdint>

namespace scdv {

namespace {

struct Cursor {
  std::string_view s;
  size_t i = 0;
  bool ok = true;
  bool end() const { return i >= s.size(); }
  char peek() const { return i < s.size() ? s[i] : '\0'; }
  void ws() { while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++; }
  bool eat(char c) {
    ws();
    if (peek() != c) return false;
    i++;
    return true;
  }
};

bool hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }  // lower case only (JSON.stringify's)

/**
 * A string token at the cursor (which is on its opening quote): its extent [from, to) quotes included; canonical
 * when it is exactly what JSON.stringify writes for the string it denotes.
 */
bool stringToken(Cursor& c, size_t& from, size_t& to, bool& canonical) {
  if (c.peek() != '"') return false;
  from = c.i++;
  canonical = true;
  const std::string_view s = c.s;
  while (c.i < s.size()) {
    const unsigned char b = static_cast<unsigned char>(s[c.i]);
    if (b == '"') {
      to = ++c.i;
      return true;
    }
    if (b < 0x20) return false;  // not JSON at all
    if (b == '\\') {
      if (c.i + 1 >= s.size()) return false;
      const char e = s[c.i + 1];
      if (e == '"' || e == '\\' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
        c.i += 2;
      } else if (e == 'u') {
        if (c.i + 6 > s.size()) return false;
        const std::string_view u = s.substr(c.i + 2, 4);
        // JSON.stringify escapes as \u00xx only the control characters without a short form.
        const bool ctl = u[0] == '0' && u[1] == '0' && (u[2] == '0' || u[2] == '1') && hex(u[3]) &&
                         u != "0008" && u != "0009" && u != "000a" && u != "000c" && u != "000d";
        if (!ctl) canonical = false;
        c.i += 6;
      } else {
        canonical = false;  // \/ or not JSON: either way not JSON.stringify's
        c.i += 2;
      }
      continue;
    }
    if (b < 0x80) {
      c.i++;
      continue;
    }
    // UTF-8: well formed, shortest form, no surrogate code points (JSON.stringify's text of a JS string encodes so).
    uint32_t cp;
    size_t n;
    if (b >= 0xC2 && b <= 0xDF) { cp = b & 0x1F; n = 1; }
    else if (b >= 0xE0 && b <= 0xEF) { cp = b & 0x0F; n = 2; }
    else if (b >= 0xF0 && b <= 0xF4) { cp = b & 0x07; n = 3; }
    else { canonical = false; c.i++; continue; }
    if (c.i + n >= s.size()) { canonical = false; c.i++; continue; }
    bool good = true;
    for (size_t k = 1; k <= n; k++) {
      const unsigned char x = static_cast<unsigned char>(s[c.i + k]);
      if ((x & 0xC0) != 0x80) { good = false; break; }
      cp = (cp << 6) | (x & 0x3F);
    }
    if (!good || (n == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF))) {
      canonical = false;
      c.i++;
      continue;
    }
    c.i += n + 1;
  }
  return false;
}

/** Skip any JSON value (false: not JSON as expected). Depth-limited: metadata is small and flat. */
bool skipValue(Cursor& c, int depth) {
  c.ws();
  if (depth > 64 || c.end()) return false;
  const char ch = c.peek();
  if (ch == '"') {
    size_t a, b;
    bool canon;
    return stringToken(c, a, b, canon);
  }
  if (ch == '{' || ch == '[') {
    const char close = ch == '{' ? '}' : ']';
    c.i++;
    if (c.eat(close)) return true;
    for (;;) {
      if (ch == '{') {
        c.ws();
        size_t a, b;
        bool canon;
        if (!stringToken(c, a, b, canon) || !c.eat(':')) return false;
      }
      if (!skipValue(c, depth + 1)) return false;
      if (c.eat(',')) continue;
      return c.eat(close);
    }
  }
  // A number or a literal: its characters up to the next delimiter (their exact syntax is JSON.parse's business; the
  // fields this reads never take them).
  const size_t from = c.i;
  while (!c.end()) {
    const char x = c.peek();
    if (x == ',' || x == '}' || x == ']' || x == ' ' || x == '\t' || x == '\n' || x == '\r') break;
    if (!((x >= '0' && x <= '9') || (x >= 'a' && x <= 'z') || x == '-' || x == '+' || x == '.' || x == 'E')) return false;
    c.i++;
  }
  return c.i > from;
}

// resultItem's fields, in its order.
constexpr std::array<std::string_view, 5> kFields = {"title", "url", "published_at", "category", "site"};

}  // namespace

bool resultFields(std::string_view meta, std::string& out) {
  out.clear();
  Cursor c{meta};
  std::array<std::string_view, 5> value{};
  if (!c.eat('{')) return false;
  if (!c.eat('}')) {
    for (;;) {
      c.ws();
      size_t ka, kb;
      bool kCanon;
      if (!stringToken(c, ka, kb, kCanon) || !c.eat(':')) return false;
      const std::string_view key = meta.substr(ka + 1, kb - ka - 2);
      int field = -1;
      for (size_t f = 0; f < kFields.size(); f++) if (key == kFields[f]) field = static_cast<int>(f);
      // A key spelled with escapes could still name a field: only an escape-free key is compared.
      if (!kCanon || key.find('\\') != std::string_view::npos) return false;
      // An ad's fields (an object: resultItem's `ad`) are left to the caller, which parses the metadata.
      if (key == "ad") return false;
      c.ws();
      if (field < 0) {
        if (!skipValue(c, 1)) return false;
      } else {
        if (!value[field].empty()) return false;  // a duplicate: JSON.parse keeps the last, left to it
        if (c.peek() == '"') {
          size_t a, b;
          bool canon;
          if (!stringToken(c, a, b, canon) || !canon) return false;
          value[field] = meta.substr(a, b - a);
        } else if (meta.substr(c.i, 4) == "null") {
          value[field] = meta.substr(c.i, 4);
          c.i += 4;
        } else {
          return false;
        }
      }
      if (c.eat(',')) continue;
      if (!c.eat('}')) return false;
      break;
    }
  }
  c.ws();
  if (!c.end()) return false;
  for (size_t f = 0; f < kFields.size(); f++) {
    if (value[f].empty()) continue;
    out += ",\"";
    out += kFields[f];
    out += "\":";
    out += value[f];
  }
  return true;
}

}  // namespace scdv
