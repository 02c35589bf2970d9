// The BPE model of tokenizer.json: a word (one pre-token) starts as its
// code points and repeatedly merges the adjacent pair of lowest merge rank
// (the leftmost on a tie) until no pair has a rank, as Hugging Face's
// tokenizers do; the pieces are then looked up in the vocabulary.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "word_model.hpp"

namespace vkamp::text {

struct BpeOptions {
  std::optional<std::string> unk_token;  // what a piece outside the vocabulary becomes
  bool byte_fallback = false;            // such a piece becomes its <0xNN> byte tokens instead
  bool fuse_unk = false;                 // consecutive unknown pieces become one unk
  bool ignore_merges = false;            // a word found whole in the vocabulary is one token (Llama 3)
};

class Bpe : public WordModel {
 public:
  // `merges` in rank order. Throws std::invalid_argument on a merge or unk
  // token the vocabulary does not have.
  Bpe(std::unordered_map<std::string, int32_t> vocab, std::vector<std::pair<std::string, std::string>> merges,
      BpeOptions options);

  // Appends the ids of one word (UTF-8).
  void encode(std::string_view word, std::vector<int32_t>& out) const override;

  std::optional<int32_t> id_of(std::string_view token) const override;
  const std::unordered_map<std::string, int32_t>& vocab() const override { return vocab_; }

 private:
  void lookup(const std::string& piece, std::vector<int32_t>& out, bool& last_was_unk) const;
  std::optional<int32_t> rank_of(const std::string& a, const std::string& b) const;

  std::unordered_map<std::string, int32_t> vocab_;
  std::unordered_map<std::string, int32_t> ranks_;  // key: left + '\xFF' + right ('\xFF' is never in UTF-8)
  BpeOptions options_;
  std::optional<int32_t> unk_id_;
  int32_t byte_ids_[256];  // <0xNN> tokens, -1 where absent
  bool all_bytes_ = false;
};

}  // namespace vkamp::text
