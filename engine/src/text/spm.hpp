// The SentencePiece model of a GGUF file ("tokenizer.ggml.model": "llama")
// as llama.cpp's llm_tokenizer_spm encodes it: a word starts as its code
// points and repeatedly merges the adjacent pair whose concatenation is a
// token of the highest score (the leftmost on a tie) until no pair is a
// token; a piece left outside the vocabulary becomes its <0xNN> byte
// tokens. (Not expressible as tokenizer.json's BPE: the order comes from the
// merged token's score, not from a list of merges.)
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "word_model.hpp"

namespace vkamp::text {

class Spm : public WordModel {
 public:
  // `scores[i]` is the score of the token with id `i`; float, as llama.cpp
  // compares them. Byte tokens are looked up as <0xNN>, else as the byte itself.
  Spm(std::unordered_map<std::string, int32_t> vocab, std::vector<float> scores);

  // Throws TokenizerError naming a byte the vocabulary has no token for.
  void encode(std::string_view word, std::vector<int32_t>& out) const override;
  std::optional<int32_t> id_of(std::string_view token) const override;
  const std::unordered_map<std::string, int32_t>& vocab() const override { return vocab_; }

 private:
  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<float> scores_;
  int32_t byte_ids_[256];  // -1 where absent
};

}  // namespace vkamp::text
