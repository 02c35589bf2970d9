// nanoGPT's GPT as a vkamp graph: learned token and position embeddings,
// pre-LayerNorm blocks (causal self-attention, then a GELU MLP, each added
// to the residual stream), a final LayerNorm and an lm_head tied to the
// token embedding. Biases everywhere (nanoGPT's bias=True). Dropout where
// nanoGPT's model.py puts it (config.dropout; 0 = none, and then no dropout
// nodes at all): after the embeddings ("transformer.drop"), after the
// attention's output projection ("...attn.resid_dropout") and after the
// MLP's ("...mlp.dropout"). nanoGPT also drops attention probabilities
// (attn_dropout); vkamp's attention op does not (yet).
// GELU is the tanh approximation (ops/activation.hpp), where nanoGPT uses
// the exact erf form: tests/golden/gpt_reference.py builds the same model.
//
// Parameter names and layouts are nanoGPT's ("transformer.wte.weight"
// {vocab, n_embd}, "transformer.h.0.attn.c_attn.weight" {3 n_embd, n_embd},
// ...), so a safetensors file of the parameters loads into nanoGPT's GPT
// with load_state_dict. The matrices are declared first, then the biases
// and norm gains, so training that decays matrices only (nanoGPT's rule,
// --no-decay-vectors) runs the optimizer as two dispatches.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "vkamp/graph/graph.hpp"

namespace vkamp::models {

struct GptConfig {
  uint32_t vocab_size = 0;
  uint32_t block_size = 64;  // positions per window
  uint32_t n_layer = 2, n_head = 4, n_embd = 64;
  // nanoGPT's dropout (0.2 in its shakespeare_char config): a training
  // setting, not part of the architecture, so the metadata leaves it out.
  double dropout = 0;
};

// Throws ConfigError for a config that cannot be built (n_embd not a
// multiple of n_head, a zero size).
graph::Graph gpt_graph(const GptConfig& c);

// The config as safetensors metadata ("vkamp.n_layer", ...: decimal
// strings, with "vkamp.model" = "gpt"), and back; from_metadata throws
// ConfigError naming a missing or bad key.
std::map<std::string, std::string> gpt_metadata(const GptConfig& c);
GptConfig gpt_config_from_metadata(const std::map<std::string, std::string>& meta, const std::string& origin);

}  // namespace vkamp::models
