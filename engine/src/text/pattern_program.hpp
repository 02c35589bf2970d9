// The parsed form of a PretokenizePattern, shared by its parser
// (pattern_parser.cpp) and its matcher (pretokenize_pattern.cpp).
#pragma once
#include <cstddef>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "pretokenize_pattern.hpp"

namespace vkamp::text {

// A set of code points: ranges and property tests, each possibly negated
// (\S, \P{L}), then the whole set negated for [^...].
struct CharSet {
  bool negated = false;
  bool fold_ascii = false;  // inside (?i:...)
  std::vector<std::pair<char32_t, char32_t>> ranges;
  std::vector<std::pair<bool (*)(char32_t), bool>> tests;  // test, negated
  bool contains(char32_t c) const;
};

struct Alternatives;

// One atom with its quantifier: a character set, or a group (plain or a
// lookahead, positive or negative).
struct Item {
  enum class Kind { set, group, look_ahead, negative_look_ahead } kind = Kind::set;
  CharSet set;
  std::shared_ptr<Alternatives> group;
  std::size_t min = 1, max = 1;  // max npos: unbounded
  bool greedy = true;
};

using Sequence = std::vector<Item>;

struct Alternatives {
  std::vector<Sequence> options;
};

struct PretokenizePattern::Program {
  Alternatives top;
};

// Parses `regex` (UTF-8); throws PatternError naming the construct.
Alternatives parse_pattern(std::string_view regex);

}  // namespace vkamp::text
