// GPT-2's byte-level alphabet: every byte maps to one printable code point
// (the printable Latin-1 bytes to themselves, the other 68 to U+0100 and
// up, in byte order), so a vocabulary of strings covers arbitrary bytes.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace vkamp::text {

char32_t byte_to_code_point(unsigned char b);
// The byte a code point stands for, or none when it is not in the alphabet.
std::optional<unsigned char> code_point_to_byte(char32_t c);
// The UTF-8 bytes of `utf8` written in the alphabet.
std::u32string bytes_to_alphabet(std::string_view utf8);

}  // namespace vkamp::text
