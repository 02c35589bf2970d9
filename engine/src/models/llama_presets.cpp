#include "vkamp/models/llama_presets.hpp"

namespace vkamp::models {

namespace {

struct Preset {
  const char* name;
  LlamaConfig config;
};

LlamaConfig tinyllama() {
  // TinyLlama/TinyLlama-1.1B-Chat-v1.0's config.json.
  LlamaConfig c;
  c.vocab_size = 32000;
  c.hidden_size = 2048;
  c.intermediate_size = 5632;
  c.num_hidden_layers = 22;
  c.num_attention_heads = 32;
  c.num_key_value_heads = 4;
  c.max_position_embeddings = 2048;
  c.rms_norm_eps = 1e-5;
  return c;
}

LlamaConfig llama_tiny() {
  LlamaConfig c;
  c.vocab_size = 4487;  // examples/llama_tiny's tokenizer
  c.hidden_size = 64;
  c.intermediate_size = 176;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.max_position_embeddings = 512;
  c.rms_norm_eps = 1e-5;
  return c;
}

const Preset kPresets[] = {{"tinyllama-1.1b", tinyllama()}, {"llama-tiny", llama_tiny()}};

}  // namespace

std::optional<LlamaConfig> llama_preset(const std::string& name) {
  for (const Preset& p : kPresets)
    if (name == p.name) return p.config;
  return std::nullopt;
}

std::string llama_preset_names() {
  std::string s;
  for (const Preset& p : kPresets) s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

}  // namespace vkamp::models
