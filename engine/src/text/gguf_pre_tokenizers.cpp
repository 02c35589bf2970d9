#include "gguf_pre_tokenizers.hpp"

#include <map>

namespace vkamp::text {
namespace {

// GPT-2's expression. (llama.cpp matches it with hand-written code that
// also ends in "|\s+"; as a split that keeps the text between matches, the
// two give the same pieces.)
const char kGpt2[] = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
// Llama 3's, with (?i:...) written out as llama.cpp writes it.
const char kLlama3[] =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Qwen2's: Llama 3's with single digits.
const char kQwen2[] =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Qwen3.5's: marks join letters.
const char kQwen35[] =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

const std::map<std::string, GgufPreTokenizer>& table() {
  static const std::map<std::string, GgufPreTokenizer> t = [] {
    std::map<std::string, GgufPreTokenizer> m;
    auto add = [&](std::initializer_list<const char*> names, const GgufPreTokenizer& p) {
      for (const char* n : names) m.emplace(n, p);
    };
    // llama.cpp's LLAMA_VOCAB_PRE_TYPE_DEFAULT: a file without a known pre-tokenizer.
    add({"default"}, {{R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}});
    add({"falcon"}, {{R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"}});
    add({"llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral"}, {{kLlama3}, true, true, true});
    add({"dbrx", "smaug-bpe"}, {{kLlama3}});
    add({"gpt-2", "phi-2", "mpt", "olmo"}, {{kGpt2}});
    add({"starcoder", "refact", "smollm"}, {{R"(\p{N})", kGpt2}});
    add({"command-r"}, {{R"(\p{N})", kGpt2}, false, false, false});
    add({"qwen2", "deepseek-r1-qwen"}, {{kQwen2}, false, false, false});
    add({"stablelm2", "megrez"}, {{kQwen2}});
    add({"qwen35"}, {{kQwen35}, false, false, false});
    return m;
  }();
  return t;
}

}  // namespace

const GgufPreTokenizer* gguf_pre_tokenizer(const std::string& name) {
  const auto it = table().find(name);
  return it == table().end() ? nullptr : &it->second;
}

std::string gguf_pre_tokenizer_names() {
  std::string s;
  for (const auto& [name, p] : table()) s += (s.empty() ? "" : ", ") + name;
  return s;
}

}  // namespace vkamp::text
