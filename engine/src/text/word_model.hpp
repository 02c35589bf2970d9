// What turns one pre-tokenized word into ids: tokenizer.json's BPE (bpe.hpp)
// or, for GGUF files of SentencePiece models, llama.cpp's score-driven
// merging (spm.hpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace vkamp::text {

class WordModel {
 public:
  virtual ~WordModel() = default;
  // Appends the ids of one word (UTF-8).
  virtual void encode(std::string_view word, std::vector<int32_t>& out) const = 0;
  virtual std::optional<int32_t> id_of(std::string_view token) const = 0;
  // Every token of the vocabulary and its id.
  virtual const std::unordered_map<std::string, int32_t>& vocab() const = 0;
};

}  // namespace vkamp::text
