// The Llama family (Llama 2 and 3, TinyLlama, Mistral, Qwen2) as a vkamp
// graph, with Hugging Face's parameter names and layouts, so a checkpoint's
// tensors load by name ("model.layers.0.self_attn.q_proj.weight" {q, hidden}):
// token embedding (no position table), pre-RMSNorm blocks of rotary
// grouped-query attention and a SwiGLU MLP added to the residual stream, a
// final RMSNorm and the lm_head (its own weight, or the embedding's when
// tied). Biases on q, k and v only where the config says (Qwen2), nowhere
// else. No dropout: Hugging Face's attention_dropout is 0 for all of them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vkamp/graph/graph.hpp"
#include "vkamp/ops/rope.hpp"

namespace vkamp::models {

struct LlamaConfig {
  std::string architecture = "LlamaForCausalLM";
  uint32_t vocab_size = 0, hidden_size = 0, intermediate_size = 0;
  uint32_t num_hidden_layers = 0, num_attention_heads = 0, num_key_value_heads = 0;
  uint32_t head_dim = 0;  // 0: hidden_size / num_attention_heads
  uint32_t max_position_embeddings = 2048;
  double rms_norm_eps = 1e-6;
  ops::Rope rope;
  bool tie_word_embeddings = false;
  bool attention_bias = false;  // q, k and v biases (Qwen2's)
  double initializer_range = 0.02;
  // Mistral's sliding_window (0: none). vkamp's attention sees every earlier
  // position, which is the same only for sequences no longer than it.
  uint32_t sliding_window = 0;

  uint32_t head_size() const { return head_dim ? head_dim : hidden_size / num_attention_heads; }
};

// LoRA adapters on the projections named in `targets` (PEFT's module
// names: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj),
// each x W^T + (alpha / rank) (dropout(x) A^T) B^T with A {rank, in} drawn as PEFT
// draws it (nn.Linear's default) and B {out, rank} at 0, named as PEFT
// names them: "<module>.lora_A.weight". Every other tensor is frozen. Rank
// 0: no adapters, every tensor trained (full fine-tuning).
struct LoraConfig {
  uint32_t rank = 0;
  // PEFT's lora_dropout: each adapter's input dropped with this
  // probability in training (its own counter-based mask per projection,
  // so a resumed run draws the same), the identity at evaluation.
  double dropout = 0;
  // Every tensor frozen and no adapters (rank 0): a model held for
  // generation, in the run's format alone.
  bool frozen_base = false;
  double alpha = 32;
  std::vector<std::string> targets = kLoraDefaultTargets();
  static std::vector<std::string> kLoraDefaultTargets() {
    return {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
  }
};

// Throws ConfigError for a config that cannot be built (a zero size, heads
// that do not divide, an odd head size, seq_len past
// max_position_embeddings, an unknown LoRA target). Parameters start as
// Hugging Face initialises them: N(0, initializer_range) matrices, RMSNorm
// weights 1, biases 0.
graph::Graph llama_graph(const LlamaConfig& c, uint32_t seq_len, const LoraConfig& lora = {});

}  // namespace vkamp::models
