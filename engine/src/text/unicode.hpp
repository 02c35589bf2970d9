// Code points from UTF-8 and back, and the Unicode properties the
// tokenizer's patterns and NFC need, from the generated tables
// (make_unicode_tables.py; no ICU, which the MinGW build lacks).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vkamp::text {

// Unicode's general categories, in the generator's order.
enum class Category : uint8_t {
  Cn, Lu, Ll, Lt, Lm, Lo, Mn, Mc, Me, Nd, Nl, No, Pc, Pd, Ps,
  Pe, Pi, Pf, Po, Sm, Sc, Sk, So, Zs, Zl, Zp, Cc, Cf, Cs, Co
};

Category category(char32_t c);
bool is_letter(char32_t c);  // \p{L}
bool is_number(char32_t c);  // \p{N}
bool is_mark(char32_t c);    // \p{M}
bool is_white_space(char32_t c);  // White_Space, what \s means
// The category (or group: "L", "N", ...) a \p{NAME} names, as a test on a
// code point; false when vkamp does not know the name.
bool category_named(std::string_view name, bool (*&test)(char32_t));

// Decodes UTF-8. A byte that starts no valid sequence (a stray
// continuation byte, an overlong form, a surrogate, a truncated sequence)
// becomes U+FFFD, one per byte, as a lossy decoder does; `invalid` counts them.
std::u32string decode_utf8(std::string_view s, std::size_t* invalid = nullptr);
void append_utf8(std::string& out, char32_t c);
std::string encode_utf8(std::u32string_view s);
// The byte offset of the first byte that starts no valid sequence, or npos.
std::size_t first_invalid_utf8(std::string_view s);

// Canonical composition (NFC) of well-formed text.
std::u32string nfc(std::u32string_view s);

namespace tables {
struct CategoryRun { char32_t first; uint8_t category; };
struct CodeRange { char32_t first, last; };
struct CombiningRun { char32_t first, last; uint8_t combining_class; };
struct Decomposition { char32_t code_point, first, second; };
struct Composition { char32_t first, second, composite; };
extern const CategoryRun kCategoryRuns[];
extern const std::size_t kCategoryRunCount;
extern const CodeRange kWhiteSpace[];
extern const std::size_t kWhiteSpaceCount;
extern const CombiningRun kCombiningRuns[];
extern const std::size_t kCombiningRunCount;
extern const Decomposition kDecompositions[];
extern const std::size_t kDecompositionCount;
extern const Composition kCompositions[];
extern const std::size_t kCompositionCount;
}  // namespace tables

}  // namespace vkamp::text
