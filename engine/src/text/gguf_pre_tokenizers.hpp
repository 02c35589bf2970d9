// The pre-tokenizers a GGUF file names in "tokenizer.ggml.pre", as
// llama.cpp's src/llama-vocab.cpp maps each name to its regular
// expressions (applied one after another, each splitting the pieces the
// last one left, matches and the text between them kept) and its flags.
// vkamp knows the Llama family's names whose expressions its pattern
// matcher reads; any other name is refused by the loader.
#pragma once
#include <string>
#include <vector>

namespace vkamp::text {

struct GgufPreTokenizer {
  std::vector<std::string> regexes;
  bool ignore_merges = false;  // a word that is a token whole is that token (Llama 3)
  bool add_bos = false;        // llama.cpp's default where the file has no add_bos_token
  bool clean_spaces = true;    // decode drops " " before . , ! ? and in contractions
};

// The pre-tokenizer named `name`, or nullptr.
const GgufPreTokenizer* gguf_pre_tokenizer(const std::string& name);
// The names vkamp knows, for messages.
std::string gguf_pre_tokenizer_names();

}  // namespace vkamp::text
