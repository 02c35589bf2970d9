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

LlamaConfig qwen25_05b() {
  // Qwen/Qwen2.5-0.5B's config.json (architecture Qwen2ForCausalLM).
  LlamaConfig c;
  c.architecture = "Qwen2ForCausalLM";
  c.vocab_size = 151936;
  c.hidden_size = 896;
  c.intermediate_size = 4864;
  c.num_hidden_layers = 24;
  c.num_attention_heads = 14;
  c.num_key_value_heads = 2;
  c.max_position_embeddings = 32768;
  c.rms_norm_eps = 1e-6;
  c.rope.theta = 1e6;
  c.tie_word_embeddings = true;
  c.attention_bias = true;
  return c;
}

LlamaConfig qwen25_15b() {
  // Qwen/Qwen2.5-1.5B's config.json: the size of the models qvac-fabric's
  // published Vulkan LoRA rates use (Qwen3-1.7B), in an architecture vkamp reads.
  LlamaConfig c = qwen25_05b();
  c.hidden_size = 1536;
  c.intermediate_size = 8960;
  c.num_hidden_layers = 28;
  c.num_attention_heads = 12;
  c.num_key_value_heads = 2;
  c.max_position_embeddings = 131072;
  return c;
}

// Llama 3's rope_scaling (type llama3), as meta-llama's 3.1 and 3.2 configs give it.
ops::Rope llama3_rope() {
  ops::Rope r;
  r.theta = 500000;
  r.factor = 32;
  r.low_freq_factor = 1;
  r.high_freq_factor = 4;
  r.original_max_positions = 8192;
  return r;
}

LlamaConfig llama32_1b() {
  // meta-llama/Llama-3.2-1B's config.json.
  LlamaConfig c;
  c.vocab_size = 128256;
  c.hidden_size = 2048;
  c.intermediate_size = 8192;
  c.num_hidden_layers = 16;
  c.num_attention_heads = 32;
  c.num_key_value_heads = 8;
  c.head_dim = 64;
  c.max_position_embeddings = 131072;
  c.rms_norm_eps = 1e-5;
  c.rope = llama3_rope();
  c.tie_word_embeddings = true;
  return c;
}

LlamaConfig llama31_8b() {
  // meta-llama/Llama-3.1-8B's config.json (rope_scaling factor 8).
  LlamaConfig c;
  c.vocab_size = 128256;
  c.hidden_size = 4096;
  c.intermediate_size = 14336;
  c.num_hidden_layers = 32;
  c.num_attention_heads = 32;
  c.num_key_value_heads = 8;
  c.max_position_embeddings = 131072;
  c.rms_norm_eps = 1e-5;
  c.rope = llama3_rope();
  c.rope.factor = 8;
  return c;
}

const Preset kPresets[] = {{"tinyllama-1.1b", tinyllama()}, {"qwen2.5-0.5b", qwen25_05b()},
                           {"qwen2.5-1.5b", qwen25_15b()},  {"llama-3.2-1b", llama32_1b()},
                           {"llama-3.1-8b", llama31_8b()},  {"llama-tiny", llama_tiny()}};

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
