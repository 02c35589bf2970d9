#include "vkamp/models/llama.hpp"

#include "vkamp/config_error.hpp"

namespace vkamp::models {

namespace {

void check(const LlamaConfig& c, uint32_t seq_len) {
  auto fail = [&](const std::string& what) { throw ConfigError(c.architecture + ": " + what); };
  if (!c.vocab_size || !c.hidden_size || !c.intermediate_size || !c.num_hidden_layers || !c.num_attention_heads ||
      !c.num_key_value_heads)
    fail("vocab_size, hidden_size, intermediate_size, num_hidden_layers, num_attention_heads and "
         "num_key_value_heads must all be at least 1");
  if (!c.head_dim && c.hidden_size % c.num_attention_heads)
    fail("hidden_size " + std::to_string(c.hidden_size) + " is not a multiple of num_attention_heads " +
         std::to_string(c.num_attention_heads) + " (and no head_dim is given)");
  if (c.head_size() % 2) fail("head size " + std::to_string(c.head_size()) + " is odd; rotary pairs need it even");
  if (c.num_attention_heads % c.num_key_value_heads)
    fail("num_attention_heads " + std::to_string(c.num_attention_heads) + " is not a multiple of num_key_value_heads " +
         std::to_string(c.num_key_value_heads));
  if (!seq_len) fail("a sequence length of 0");
  if (seq_len > c.max_position_embeddings)
    fail("sequence length " + std::to_string(seq_len) + " is past max_position_embeddings " +
         std::to_string(c.max_position_embeddings));
  if (c.sliding_window && seq_len > c.sliding_window)
    fail("sequence length " + std::to_string(seq_len) + " is past sliding_window " + std::to_string(c.sliding_window) +
         ", and vkamp's attention has no sliding window");
  if (!(c.rms_norm_eps > 0)) fail("rms_norm_eps must be above 0");
  if (!(c.rope.theta > 0)) fail("rope_theta must be above 0");
}

std::string layer(uint32_t i) { return "model.layers." + std::to_string(i) + "."; }

}  // namespace

graph::Graph llama_graph(const LlamaConfig& c, uint32_t seq_len) {
  check(c, seq_len);
  using graph::Init;
  const uint32_t C = c.hidden_size, hd = c.head_size(), H = c.num_attention_heads, KV = c.num_key_value_heads;
  const double std = c.initializer_range;
  graph::Graph g;
  g.set_origin(c.architecture);
  g.input("input_ids", graph::Shape::tokens(seq_len));

  // Matrices first, then the vectors, as the GPT (optimizer dispatches).
  g.param("model.embed_tokens.weight", {c.vocab_size, C}, Init::Normal, std);
  for (uint32_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = layer(i);
    g.param(p + "self_attn.q_proj.weight", {H * hd, C}, Init::Normal, std);
    g.param(p + "self_attn.k_proj.weight", {KV * hd, C}, Init::Normal, std);
    g.param(p + "self_attn.v_proj.weight", {KV * hd, C}, Init::Normal, std);
    g.param(p + "self_attn.o_proj.weight", {C, H * hd}, Init::Normal, std);
    g.param(p + "mlp.gate_proj.weight", {c.intermediate_size, C}, Init::Normal, std);
    g.param(p + "mlp.up_proj.weight", {c.intermediate_size, C}, Init::Normal, std);
    g.param(p + "mlp.down_proj.weight", {C, c.intermediate_size}, Init::Normal, std);
  }
  if (!c.tie_word_embeddings) g.param("lm_head.weight", {c.vocab_size, C}, Init::Normal, std);
  for (uint32_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = layer(i);
    g.param(p + "input_layernorm.weight", {C}, Init::One);
    g.param(p + "post_attention_layernorm.weight", {C}, Init::One);
    if (c.attention_bias) {
      g.param(p + "self_attn.q_proj.bias", {H * hd}, Init::Zero);
      g.param(p + "self_attn.k_proj.bias", {KV * hd}, Init::Zero);
      g.param(p + "self_attn.v_proj.bias", {KV * hd}, Init::Zero);
    }
  }
  g.param("model.norm.weight", {C}, Init::One);

  // Node names are the module paths, as in the GPT.
  std::string x = g.embedding("model.embed_tokens", "input_ids", "model.embed_tokens.weight");
  for (uint32_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = layer(i);
    auto linear = [&](const std::string& name, const std::string& in, bool bias = false) {
      return g.linear(p + name, in, p + name + ".weight", bias ? p + name + ".bias" : "");
    };
    std::string h = g.rms_norm(p + "input_layernorm", x, p + "input_layernorm.weight", c.rms_norm_eps);
    const std::string q = linear("self_attn.q_proj", h, c.attention_bias);
    const std::string k = linear("self_attn.k_proj", h, c.attention_bias);
    const std::string v = linear("self_attn.v_proj", h, c.attention_bias);
    h = g.rope(p + "self_attn.rotary", q, k, v, H, KV, c.rope);
    h = linear("self_attn.o_proj", g.attention(p + "self_attn", h, H));
    x = g.add(p + "self_attn.residual", x, h);
    h = g.rms_norm(p + "post_attention_layernorm", x, p + "post_attention_layernorm.weight", c.rms_norm_eps);
    h = g.glu(p + "mlp.act", linear("mlp.gate_proj", h), linear("mlp.up_proj", h), ops::Activation::SiLU);
    x = g.add(p + "mlp.residual", x, linear("mlp.down_proj", h));
  }
  x = g.rms_norm("model.norm", x, "model.norm.weight", c.rms_norm_eps);
  g.set_output(g.linear("lm_head", x, c.tie_word_embeddings ? "model.embed_tokens.weight" : "lm_head.weight"));
  return g;
}

}  // namespace vkamp::models
