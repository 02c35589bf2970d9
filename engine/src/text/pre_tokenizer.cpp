#include "pre_tokenizer.hpp"

#include <memory>

#include "byte_level.hpp"
#include "normalizer.hpp"
#include "unicode.hpp"

namespace vkamp::text {

const char kGpt2Pattern[] = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

// Each piece split at the matches of `pattern`: matches only (`keep_gaps`
// false), or the matches and the text between them (Split's "Isolated").
void split_pieces(std::vector<std::u32string>& pieces, const PretokenizePattern& pattern, bool keep_matches,
                  bool keep_gaps) {
  std::vector<std::u32string> out;
  for (const std::u32string& p : pieces) {
    std::size_t done = 0;
    for (const auto& [begin, end] : pattern.find_all(p)) {
      if (keep_gaps && begin > done) out.push_back(p.substr(done, begin - done));
      if (keep_matches) out.push_back(p.substr(begin, end - begin));
      done = end;
    }
    if (keep_gaps && done < p.size()) out.push_back(p.substr(done));
  }
  pieces = std::move(out);
}

PieceStep split_step(const json& j, const Where& w) {
  auto pattern = pattern_of(member(j, "pattern", w), w.at("pattern"));
  const bool invert = bool_or(j, "invert", false, w);
  const std::string behavior = string_or(j, "behavior", "Isolated", w);
  // invert: the pattern matches the pieces themselves (nothing between is kept).
  if (invert) return [pattern](auto& pieces, std::size_t) { split_pieces(pieces, *pattern, true, false); };
  if (behavior == "Isolated")
    return [pattern](auto& pieces, std::size_t) { split_pieces(pieces, *pattern, true, true); };
  if (behavior == "Removed")
    return [pattern](auto& pieces, std::size_t) { split_pieces(pieces, *pattern, false, true); };
  w.at("behavior").fail("the Split behavior \"" + behavior + "\" is not supported by vkamp (it reads Isolated and "
                        "Removed)");
}

PieceStep byte_level_step(const json& j, const Where& w) {
  const bool prefix_space = bool_or(j, "add_prefix_space", true, w);
  const bool use_regex = bool_or(j, "use_regex", true, w);
  auto pattern = std::make_shared<PretokenizePattern>(PretokenizePattern::regex(kGpt2Pattern));
  return [=](std::vector<std::u32string>& pieces, std::size_t) {
    if (prefix_space)
      for (std::u32string& p : pieces)
        if (p.empty() || p[0] != U' ') p.insert(0, 1, U' ');
    if (use_regex) split_pieces(pieces, *pattern, true, false);
    for (std::u32string& p : pieces) p = bytes_to_alphabet(encode_utf8(p));
  };
}

PieceStep metaspace_step(const json& j, const Where& w) {
  const std::u32string replacement = decode_utf8(string_or(j, "replacement", "\xE2\x96\x81", w));
  // Files before prepend_scheme said add_prefix_space (true: "always").
  const std::string scheme =
      string_or(j, "prepend_scheme", bool_or(j, "add_prefix_space", true, w) ? "always" : "never", w);
  if (scheme != "always" && scheme != "first" && scheme != "never")
    w.at("prepend_scheme").fail("expected \"always\", \"first\" or \"never\", found \"" + scheme + "\"");
  // Splitting at each replacement is where Hugging Face's own
  // implementations disagree (the Rust one splits, the JavaScript one
  // does not), so vkamp refuses it rather than pick one.
  if (bool_or(j, "split", false, w))
    w.at("split").fail("Metaspace with \"split\": true is not supported by vkamp (SentencePiece-style files "
                       "set it false, or use the Prepend and Replace normalizers)");
  return [=](std::vector<std::u32string>& pieces, std::size_t section) {
    for (std::u32string& p : pieces) {
      std::u32string out;
      for (char32_t c : p) {
        if (c == U' ') out += replacement;
        else out.push_back(c);
      }
      const bool prepend = scheme == "always" || (scheme == "first" && section == 0);
      if (prepend && out.compare(0, replacement.size(), replacement) != 0) out.insert(0, replacement);
      p = std::move(out);
    }
  };
}

void add_steps(const json& j, const Where& w, std::vector<PieceStep>& steps) {
  const std::string type = component_type(j, w);
  if (type == "Sequence") {
    const json& list = array_member(j, "pretokenizers", w);
    for (std::size_t i = 0; i < list.size(); ++i) add_steps(list[i], w.at("pretokenizers").at(i), steps);
  } else if (type == "Split") {
    steps.push_back(split_step(j, w));
  } else if (type == "ByteLevel") {
    steps.push_back(byte_level_step(j, w));
  } else if (type == "Metaspace") {
    steps.push_back(metaspace_step(j, w));
  } else {
    unsupported(w, "pre-tokenizer", type, "Sequence, Split, ByteLevel and Metaspace");
  }
}

}  // namespace

std::vector<PieceStep> pre_tokenizer_steps(const json& j, const Where& w) {
  std::vector<PieceStep> steps;
  if (!j.is_null()) add_steps(j, w, steps);
  return steps;
}

}  // namespace vkamp::text
