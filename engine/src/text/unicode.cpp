#include "unicode.hpp"

#include <algorithm>

namespace vkamp::text {

Category category(char32_t c) {
  using tables::kCategoryRuns;
  const auto* end = kCategoryRuns + tables::kCategoryRunCount;
  const auto* it = std::upper_bound(kCategoryRuns, end, c,
                                    [](char32_t v, const tables::CategoryRun& r) { return v < r.first; });
  if (it == kCategoryRuns) return Category::Cn;
  return static_cast<Category>((it - 1)->category);
}

namespace {
bool between(char32_t c, Category lo, Category hi) {
  const Category k = category(c);
  return k >= lo && k <= hi;
}
bool is_Lu(char32_t c) { return category(c) == Category::Lu; }
bool is_Ll(char32_t c) { return category(c) == Category::Ll; }
bool is_Lt(char32_t c) { return category(c) == Category::Lt; }
bool is_Lm(char32_t c) { return category(c) == Category::Lm; }
bool is_Lo(char32_t c) { return category(c) == Category::Lo; }
bool is_Nd(char32_t c) { return category(c) == Category::Nd; }
bool is_P(char32_t c) { return between(c, Category::Pc, Category::Po); }
bool is_S(char32_t c) { return between(c, Category::Sm, Category::So); }
bool is_Z(char32_t c) { return between(c, Category::Zs, Category::Zp); }
bool is_C(char32_t c) { return category(c) == Category::Cn || between(c, Category::Cc, Category::Co); }
}  // namespace

bool is_letter(char32_t c) { return between(c, Category::Lu, Category::Lo); }
bool is_number(char32_t c) { return between(c, Category::Nd, Category::No); }
bool is_mark(char32_t c) { return between(c, Category::Mn, Category::Me); }

bool is_white_space(char32_t c) {
  for (std::size_t i = 0; i < tables::kWhiteSpaceCount; ++i)
    if (c >= tables::kWhiteSpace[i].first && c <= tables::kWhiteSpace[i].last) return true;
  return false;
}

bool category_named(std::string_view name, bool (*&test)(char32_t)) {
  struct Named { std::string_view name; bool (*test)(char32_t); };
  static const Named kNames[] = {
      {"L", is_letter}, {"Letter", is_letter}, {"N", is_number}, {"Number", is_number},
      {"M", is_mark}, {"Mark", is_mark}, {"P", is_P}, {"Punctuation", is_P}, {"S", is_S},
      {"Symbol", is_S}, {"Z", is_Z}, {"Separator", is_Z}, {"C", is_C}, {"Other", is_C},
      {"Lu", is_Lu}, {"Ll", is_Ll}, {"Lt", is_Lt}, {"Lm", is_Lm}, {"Lo", is_Lo}, {"Nd", is_Nd},
  };
  for (const Named& n : kNames)
    if (n.name == name) {
      test = n.test;
      return true;
    }
  return false;
}

namespace {

// One step of the WHATWG UTF-8 decoder (what Rust's from_utf8_lossy and
// JavaScript's TextDecoder do): the code point at s[i] and its length, or
// U+FFFD over the longest prefix of a valid sequence (at least one byte).
char32_t next_code_point(std::string_view s, std::size_t i, std::size_t& length, bool& valid) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  length = 1;
  valid = true;
  if (b0 < 0x80) return b0;
  int need = 0;
  unsigned char lower = 0x80, upper = 0xBF;
  char32_t cp = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1;
    cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2;
    cp = b0 & 0x0F;
    if (b0 == 0xE0) lower = 0xA0;
    if (b0 == 0xED) upper = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3;
    cp = b0 & 0x07;
    if (b0 == 0xF0) lower = 0x90;
    if (b0 == 0xF4) upper = 0x8F;
  } else {
    valid = false;
    return 0xFFFD;
  }
  for (int k = 1; k <= need; ++k) {
    if (i + k >= s.size()) break;
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < lower || b > upper) break;
    lower = 0x80;
    upper = 0xBF;
    cp = (cp << 6) | (b & 0x3F);
    length = k + 1;
    if (k == need) return cp;
  }
  valid = false;
  return 0xFFFD;
}

}  // namespace

std::u32string decode_utf8(std::string_view s, std::size_t* invalid) {
  std::u32string out;
  out.reserve(s.size());
  if (invalid) *invalid = 0;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t length = 0;
    bool valid = true;
    out.push_back(next_code_point(s, i, length, valid));
    if (!valid && invalid) ++*invalid;
    i += length;
  }
  return out;
}

std::size_t first_invalid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t length = 0;
    bool valid = true;
    next_code_point(s, i, length, valid);
    if (!valid) return i;
    i += length;
  }
  return std::string_view::npos;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::string encode_utf8(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) append_utf8(out, c);
  return out;
}

}  // namespace vkamp::text
