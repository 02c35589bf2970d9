// tokenizer.json's "normalizer": what the text goes through before the
// pre-tokenizer (Llama 2's Prepend("▁") + Replace(" ", "▁"), Qwen2's NFC).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "json_fields.hpp"
#include "pretokenize_pattern.hpp"

namespace vkamp::text {

using TextStep = std::function<void(std::u32string&)>;

// The steps of the normalizer `j` (null: none), a Sequence flattened.
std::vector<TextStep> normalizer_steps(const json& j, const Where& w);

// {"String": "..."} or {"Regex": "..."}, as Replace and Split give them.
std::shared_ptr<const PretokenizePattern> pattern_of(const json& j, const Where& w);
// Every match of `pattern` in `s` replaced by `content`.
std::u32string replace_all(const PretokenizePattern& pattern, const std::u32string& s, const std::u32string& content);

}  // namespace vkamp::text
