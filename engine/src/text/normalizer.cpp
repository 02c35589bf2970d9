#include "normalizer.hpp"

#include "unicode.hpp"

namespace vkamp::text {

std::shared_ptr<const PretokenizePattern> pattern_of(const json& j, const Where& w) {
  expect_object(j, w);
  if (const json* s = optional_member(j, "String"))
    return std::make_shared<PretokenizePattern>(PretokenizePattern::literal(decode_utf8(as_string(*s, w.at("String")))));
  if (const json* r = optional_member(j, "Regex")) {
    try {
      return std::make_shared<PretokenizePattern>(PretokenizePattern::regex(as_string(*r, w.at("Regex"))));
    } catch (const PatternError& e) {
      w.at("Regex").fail(e.what());
    }
  }
  w.fail("expected {\"String\": ...} or {\"Regex\": ...}");
}

std::u32string replace_all(const PretokenizePattern& pattern, const std::u32string& s, const std::u32string& content) {
  std::u32string out;
  std::size_t done = 0;
  for (const auto& [begin, end] : pattern.find_all(s)) {
    out.append(s, done, begin - done);
    out += content;
    done = end;
  }
  out.append(s, done, std::u32string::npos);
  return out;
}

namespace {

void add_steps(const json& j, const Where& w, std::vector<TextStep>& steps) {
  const std::string type = component_type(j, w);
  if (type == "Sequence") {
    const json& list = array_member(j, "normalizers", w);
    for (std::size_t i = 0; i < list.size(); ++i) add_steps(list[i], w.at("normalizers").at(i), steps);
  } else if (type == "Prepend") {
    const std::u32string prefix = decode_utf8(string_member(j, "prepend", w));
    // As Hugging Face's: nothing is prepended to empty text.
    steps.push_back([prefix](std::u32string& s) {
      if (!s.empty()) s.insert(0, prefix);
    });
  } else if (type == "Replace") {
    auto pattern = pattern_of(member(j, "pattern", w), w.at("pattern"));
    const std::u32string content = decode_utf8(string_or(j, "content", "", w));
    steps.push_back([pattern, content](std::u32string& s) { s = replace_all(*pattern, s, content); });
  } else if (type == "NFC") {
    steps.push_back([](std::u32string& s) { s = nfc(s); });
  } else {
    unsupported(w, "normalizer", type, "Sequence, Prepend, Replace and NFC");
  }
}

}  // namespace

std::vector<TextStep> normalizer_steps(const json& j, const Where& w) {
  std::vector<TextStep> steps;
  if (!j.is_null()) add_steps(j, w, steps);
  return steps;
}

}  // namespace vkamp::text
