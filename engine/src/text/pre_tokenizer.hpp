// tokenizer.json's "pre_tokenizer": splits normalized text into the words
// BPE runs on (ByteLevel, Split with a pattern, Metaspace, a Sequence).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "json_fields.hpp"

namespace vkamp::text {

// Rewrites the pieces; `section` counts the text's stretches between added
// tokens (Metaspace's prepend_scheme "first" prepends to the first only).
using PieceStep = std::function<void(std::vector<std::u32string>& pieces, std::size_t section)>;

// The steps of the pre-tokenizer `j` (null: none), a Sequence flattened.
std::vector<PieceStep> pre_tokenizer_steps(const json& j, const Where& w);

// GPT-2's pattern, which ByteLevel splits with when its use_regex is true.
extern const char kGpt2Pattern[];

}  // namespace vkamp::text
