// Decoding as llama.cpp's llama_vocab::detokenize does it for a GGUF
// tokenizer (with remove_special false, as common_detokenize calls it):
// each token's piece by its type, the first piece's leading space dropped
// where the text was given one (add_space_prefix), then llama.cpp's own
// clean-up of spaces before punctuation where the model asks for it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vkamp::text {

// tokenizer.ggml.token_type's values (any other is undefined, as in llama.cpp).
enum class GgufTokenType : int {
  undefined = 0, normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6
};

struct LlamaDetokenizer {
  bool sentencepiece = false;  // "llama": ▁ for spaces; "gpt2": GPT-2's byte alphabet
  bool add_space_prefix = false;
  bool clean_spaces = false;
  std::vector<std::string> tokens;   // UTF-8, by id
  std::vector<GgufTokenType> types;  // by id

  // The bytes of `ids` (all in range), as lossy UTF-8; `skip_special`
  // leaves out control and unknown tokens (llama.cpp's unparse_special false).
  std::string operator()(const std::vector<int32_t>& ids, bool skip_special) const;
};

}  // namespace vkamp::text
