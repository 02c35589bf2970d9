// Text as a token source for character-level models: every byte is a token.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vkamp::data {

struct TextTokens {
  std::string vocab;             // the distinct bytes, sorted
  std::vector<uint32_t> tokens;  // ids into vocab, one per byte of the text
};

// `text` in the vocabulary of its own distinct bytes.
TextTokens tokens_of(const std::string& text);
// The whole file; an empty file is a DataError.
TextTokens read_text_tokens(const std::string& path);
// `text` in a given vocabulary (from a saved model); a byte not in it is a
// DataError naming the byte and its offset.
TextTokens tokenize(const std::string& text, const std::string& vocab);

}  // namespace vkamp::data
