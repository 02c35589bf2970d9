#include "byte_level.hpp"

#include <array>

namespace vkamp::text {
namespace {

bool printable(unsigned b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

const std::array<char32_t, 256>& table() {
  static const std::array<char32_t, 256> t = [] {
    std::array<char32_t, 256> m{};
    char32_t next = 256;
    for (unsigned b = 0; b < 256; ++b) m[b] = printable(b) ? b : next++;
    return m;
  }();
  return t;
}

}  // namespace

char32_t byte_to_code_point(unsigned char b) { return table()[b]; }

std::optional<unsigned char> code_point_to_byte(char32_t c) {
  if (c < 256 && printable(c)) return static_cast<unsigned char>(c);
  if (c >= 256 && c < 256 + 68) {
    unsigned n = c - 256;
    for (unsigned b = 0; b < 256; ++b)
      if (!printable(b) && n-- == 0) return static_cast<unsigned char>(b);
  }
  return std::nullopt;
}

std::u32string bytes_to_alphabet(std::string_view utf8) {
  std::u32string out;
  out.reserve(utf8.size());
  for (char ch : utf8) out.push_back(byte_to_code_point(static_cast<unsigned char>(ch)));
  return out;
}

}  // namespace vkamp::text
