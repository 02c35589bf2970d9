// The regular expressions that tokenizer.json files give their Split
// pre-tokenizers (GPT-2's, Llama 3's, Qwen2's, ...), matched over code
// points with Oniguruma's leftmost-first backtracking semantics. Only the
// subset those patterns use: alternation, (?:...), (?i:...) (ASCII case
// folding), (?=...) and (?!...), classes with ranges and \p{..}, \s \S \d
// \D \w \W, the escapes of control characters, and ? * + {n,m} (lazy too).
// Anything else (anchors, back-references, lookbehind, possessive or
// atomic forms, nested classes) is refused by name: std::regex has no
// Unicode classes, and a silently different match would split text
// differently from Hugging Face.
#pragma once
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vkamp::text {

// What is wrong with a pattern: the construct and its offset.
class PatternError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class PretokenizePattern {
 public:
  // Parses `regex` (UTF-8); throws PatternError.
  static PretokenizePattern regex(std::string_view regex);
  // Matches `text` literally (a Split's {"String": ...}).
  static PretokenizePattern literal(std::u32string_view text);

  PretokenizePattern(PretokenizePattern&&) noexcept;
  PretokenizePattern& operator=(PretokenizePattern&&) noexcept;
  ~PretokenizePattern();

  // The end of the leftmost-first match starting at `pos`, or npos.
  std::size_t match_at(std::u32string_view text, std::size_t pos) const;
  // Every non-empty match left to right, as [begin, end) spans (a failed
  // position moves on by one code point, as JavaScript's matchAll does).
  std::vector<std::pair<std::size_t, std::size_t>> find_all(std::u32string_view text) const;

  struct Program;  // the parsed alternatives (pretokenize_pattern.cpp)

 private:
  explicit PretokenizePattern(std::unique_ptr<Program> p);
  std::unique_ptr<Program> program_;
};

}  // namespace vkamp::text
