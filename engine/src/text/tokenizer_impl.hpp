// What a loaded Tokenizer holds, shared by its loader (tokenizer_load.cpp)
// and its encode/decode (tokenizer.cpp).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "added_tokens.hpp"
#include "bpe.hpp"
#include "decoder.hpp"
#include "normalizer.hpp"
#include "pre_tokenizer.hpp"
#include "vkamp/text/tokenizer.hpp"

namespace vkamp::text {

// One entry of the post-processor's template for a single text: the ids of
// a special token, or (empty) the text's own ids.
struct TemplatePart {
  std::vector<int32_t> special_ids;
  bool is_text() const { return special_ids.empty(); }
};

struct Tokenizer::Impl {
  std::string label;  // the file, for messages
  std::vector<AddedToken> added;
  std::unique_ptr<AddedTokenSplitter> raw_splitter, normalized_splitter;
  std::vector<TextStep> normalizer;
  std::vector<PieceStep> pre_tokenizer;
  std::unique_ptr<WordModel> model;  // Bpe, or Spm for GGUF SentencePiece models
  std::vector<TemplatePart> single_template;  // empty: the text alone
  std::vector<DecodeStep> decoder;
  bool has_decoder = false;
  bool clean_up_spaces = true;  // tokenizer_config's clean_up_tokenization_spaces
  std::optional<int32_t> bos, eos;
  std::vector<std::string> id_to_token;  // UTF-8, for decode
  std::vector<bool> id_known, id_is_special;
  std::unordered_map<std::string, int32_t> added_ids;  // added tokens' contents (UTF-8)
  // GGUF files: llama.cpp's detokenizer, which decode uses instead of the steps above.
  std::function<std::string(const std::vector<int32_t>& ids, bool skip_special)> detokenize;
};

// Fills `impl` from the parsed files (tokenizer_load.cpp).
void load_tokenizer(Tokenizer::Impl& impl, const json& tokenizer, const json* config, const Where& file,
                    const Where& config_file);

}  // namespace vkamp::text
