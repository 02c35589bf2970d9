#include "text_case.hpp"

#include <vector>

#include "value.hpp"

namespace vkamp::chat {
namespace {

uint32_t decode(const std::string& c) {
  const auto b = static_cast<unsigned char>(c[0]);
  if (b < 0x80) return b;
  uint32_t cp = b & (c.size() == 2 ? 0x1F : c.size() == 3 ? 0x0F : 0x07);
  for (std::size_t k = 1; k < c.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(c[k]) & 0x3F);
  return cp;
}

std::string encode(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

// One letter's simple case pair, as Python's str.lower/upper map it, for
// the ranges vkamp covers: ASCII, Latin-1 (less the signs, and the
// y-diaeresis and sharp s whose other cases lie elsewhere), basic Greek
// (with tonos), basic Cyrillic, fullwidth Latin and circled letters.
struct CasePair {
  uint32_t lower_first, upper_first, count;
};
const CasePair kPairs[] = {
    {'a', 'A', 26},      {0xE0, 0xC0, 23},    {0xF8, 0xD8, 7},      {0x3B1, 0x391, 17},  {0x3C3, 0x3A3, 7},
    {0x3AC, 0x386, 1},   {0x3AD, 0x388, 3},   {0x3CA, 0x3AA, 2},    {0x3CC, 0x38C, 1},    {0x3CD, 0x38E, 2},   {0x430, 0x410, 32},
    {0x450, 0x400, 16},  {0xFF41, 0xFF21, 26}, {0x24D0, 0x24B6, 26},
};

// Blocks with other cased letters (Latin Extended, IPA, Greek and Cyrillic
// beyond the basic letters, Armenian, Georgian, Cherokee, Latin Extended
// Additional, Greek Extended, letterlike symbols, Glagolitic, Coptic, and
// the supplementary planes' scripts): their case is refused, not guessed.
bool other_cased_block(uint32_t cp) {
  return (cp >= 0x100 && cp < 0x2B0) || (cp >= 0x370 && cp < 0x530 && !(cp >= 0x386 && cp <= 0x3CE) &&
                                          !(cp >= 0x400 && cp <= 0x45F)) ||
         (cp >= 0x531 && cp < 0x590) || (cp >= 0x10A0 && cp < 0x1100) || (cp >= 0x13A0 && cp < 0x1400) ||
         (cp >= 0x1C80 && cp < 0x1CC0) || (cp >= 0x1E00 && cp < 0x2000) || (cp >= 0x2100 && cp < 0x2190) ||
         (cp >= 0x2C00 && cp < 0x2D30) || (cp >= 0xA640 && cp < 0xA800) || (cp >= 0xAB70 && cp < 0xABC0) ||
         (cp >= 0x10400 && cp < 0x10500) || (cp >= 0x10C80 && cp < 0x10D00) || (cp >= 0x118A0 && cp < 0x11900) ||
         (cp >= 0x16E40 && cp < 0x16EA0) || (cp >= 0x1E900 && cp < 0x1E960) || cp == 0xB5 || cp == 0xDF || cp == 0xFF;
}

// The other case of a letter, or the code point itself where it has none.
uint32_t change_case(uint32_t cp, bool upper) {
  // Sigma lowers to the final form at a word's end in Python: refused rather than guessed.
  if (other_cased_block(cp) || cp == 0x3C2 || cp == 0x390 || cp == 0x3B0 || (!upper && cp == 0x3A3))
    fail("changing the case of U+" + std::to_string(cp) + " is not supported by vkamp's renderer");
  for (const CasePair& p : kPairs) {
    const uint32_t from = upper ? p.lower_first : p.upper_first, to = upper ? p.upper_first : p.lower_first;
    if (cp >= from && cp < from + p.count) return to + (cp - from);
    const uint32_t other = upper ? p.upper_first : p.lower_first;
    if (cp >= other && cp < other + p.count) return cp;  // already in the wanted case
  }
  return cp;
}

bool is_letter_with_case(uint32_t cp) { return change_case(cp, true) != cp || change_case(cp, false) != cp; }

std::string map_case(const std::string& s, bool upper) {
  std::string out;
  for (const auto& c : code_points(s)) {
    const uint32_t cp = decode(c);
    const uint32_t m = change_case(cp, upper);
    out += m == cp ? c : encode(m);
  }
  return out;
}

}  // namespace

bool is_space(const std::string& c) {
  const uint32_t cp = decode(c);
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

std::string python_strip(const std::string& s, const std::string* chars, bool left, bool right) {
  const std::vector<std::string> cps = code_points(s);
  const std::vector<std::string> set = chars ? code_points(*chars) : std::vector<std::string>{};
  auto strip_it = [&](const std::string& c) {
    if (!chars) return is_space(c);
    for (const auto& x : set)
      if (x == c) return true;
    return false;
  };
  std::size_t lo = 0, hi = cps.size();
  while (left && lo < hi && strip_it(cps[lo])) ++lo;
  while (right && hi > lo && strip_it(cps[hi - 1])) --hi;
  std::string out;
  for (std::size_t k = lo; k < hi; ++k) out += cps[k];
  return out;
}

std::string to_lower(const std::string& s) { return map_case(s, false); }
std::string to_upper(const std::string& s) { return map_case(s, true); }

std::string capitalize(const std::string& s) {
  const auto cps = code_points(s);
  std::string out;
  for (std::size_t k = 0; k < cps.size(); ++k) out += k == 0 ? to_upper(cps[k]) : to_lower(cps[k]);
  return out;
}

std::string to_title(const std::string& s) {
  // Python's str.title(): a cased letter after an uncased character starts a word.
  std::string out;
  bool previous_cased = false;
  for (const auto& c : code_points(s)) {
    const uint32_t cp = decode(c);
    out += previous_cased ? to_lower(c) : to_upper(c);
    previous_cased = is_letter_with_case(cp);
  }
  return out;
}

}  // namespace vkamp::chat
