// tokenizer.json's "decoder": token strings back to text (ByteLevel's
// alphabet back to bytes; SentencePiece's "▁" back to spaces, <0xNN> back
// to bytes, Fuse, Strip).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "json_fields.hpp"

namespace vkamp::text {

// Rewrites the token strings (UTF-8); `is_added(token)` says which are
// added tokens, which ByteLevel passes through as they are.
using DecodeStep = std::function<void(std::vector<std::string>& tokens)>;

// The steps of the decoder `j` (null: none), a Sequence flattened.
std::vector<DecodeStep> decoder_steps(const json& j, const Where& w,
                                      std::function<bool(const std::string&)> is_added);

}  // namespace vkamp::text
