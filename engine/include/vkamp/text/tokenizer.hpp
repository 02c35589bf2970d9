// A Hugging Face tokenizer read from a model folder's tokenizer.json (and
// tokenizer_config.json beside it): byte-level BPE (GPT-2, Llama 3, Qwen2)
// and SentencePiece-style BPE with byte fallback (Llama 2, TinyLlama,
// Mistral), their added and special tokens, BOS/EOS, and decoding. Ids
// match Hugging Face's tokenizers on the same files (tests/text checks them
// against @huggingface/tokenizers). Or the tokenizer in a GGUF file's
// metadata, with llama.cpp's ids (tests/text checks them against
// llama.cpp's own cases). Anything else a file asks for (another model
// type, normalizer, pre-tokenizer, pattern construct) is refused by name
// when it loads, never approximated.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vkamp/config_error.hpp"

namespace vkamp::io {
class GgufFile;
}

namespace vkamp::text {

// A tokenizer file that cannot be used, or text that cannot be encoded:
// the message names the file and what it expected. A ConfigError, so the
// programs exit 2 on it.
class TokenizerError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

class Tokenizer {
 public:
  // Reads DIR/tokenizer.json and, where present, DIR/tokenizer_config.json
  // (add_bos_token, add_eos_token, bos_token, eos_token,
  // clean_up_tokenization_spaces). `folder` is UTF-8. Throws TokenizerError.
  static Tokenizer load(const std::string& folder);
  // The same from the files' text (`label` names them in messages).
  static Tokenizer from_json(std::string_view tokenizer_json, std::string_view tokenizer_config_json,
                             const std::string& label);
  // The tokenizer in a GGUF file's metadata (tokenizer.ggml.*: "llama",
  // SentencePiece, or "gpt2", byte-level BPE with the pre-tokenizer that
  // tokenizer.ggml.pre names), giving llama.cpp's ids: its llama_tokenize
  // with parse_special true (the special tokens written in the text become
  // their ids) and add_special as `add_special`; decode as llama.cpp's
  // detokenizer. Throws TokenizerError naming the file and the key.
  static Tokenizer from_gguf(const io::GgufFile& file);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // The ids of `utf8`; `add_special` adds what the post-processor adds
  // (BOS for Llama 2). Added tokens written in the text ("<|endoftext|>")
  // become their ids. Throws TokenizerError on text that is not valid UTF-8.
  std::vector<int32_t> encode(std::string_view utf8, bool add_special = true) const;
  // The text of `ids` (UTF-8; bytes that do not form UTF-8 become U+FFFD),
  // as Hugging Face's decode(ids) gives it. Throws TokenizerError on an id
  // outside the vocabulary.
  // `skip_special` leaves out the special tokens (BOS, EOS, ...).
  std::string decode(const std::vector<int32_t>& ids, bool skip_special = false) const;

  std::optional<int32_t> bos_id() const;
  std::optional<int32_t> eos_id() const;
  // One more than the largest id (the model's vocabulary and the added tokens).
  std::size_t vocab_size() const;
  // The token's id, or none.
  std::optional<int32_t> token_to_id(std::string_view token) const;

  struct Impl;

 private:
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vkamp::text
