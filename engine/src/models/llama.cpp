#include "vkamp/models/llama.hpp"

#include <algorithm>

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

graph::Graph llama_graph(const LlamaConfig& c, uint32_t seq_len, const LoraConfig& lora) {
  check(c, seq_len);
  for (const std::string& t : lora.targets) {
    const auto& known = LoraConfig::kLoraDefaultTargets();
    if (std::find(known.begin(), known.end(), t) == known.end())
      throw ConfigError("LoRA target '" + t + "' is not a projection of " + c.architecture +
                        " (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj)");
  }
  if (lora.rank && !(lora.alpha > 0)) throw ConfigError("lora_alpha must be above 0");
  if (!(lora.dropout >= 0 && lora.dropout < 1)) throw ConfigError("lora_dropout must be at least 0 and below 1");
  using graph::Init;
  const uint32_t C = c.hidden_size, hd = c.head_size(), H = c.num_attention_heads, KV = c.num_key_value_heads;
  const double std = c.initializer_range;
  const bool adapters = lora.rank > 0;
  auto adapted = [&](const std::string& module) {
    return adapters && std::find(lora.targets.begin(), lora.targets.end(), module) != lora.targets.end();
  };
  graph::Graph g;
  g.set_origin(c.architecture);
  g.input("input_ids", graph::Shape::tokens(seq_len));
  // With adapters, the base is frozen: held once, in the run's format.
  auto base = [&](const std::string& name, std::vector<uint32_t> dims, Init init, double s = 0) {
    if (adapters || lora.frozen_base) g.frozen(name, std::move(dims), init, s);
    else g.param(name, std::move(dims), init, s);
  };

  // Matrices first, then the vectors, as the GPT (optimizer dispatches).
  struct Projection {
    const char* module;  // PEFT's target name
    const char* path;    // under model.layers.N.
    uint32_t out, in;
  };
  const std::vector<Projection> projections = {
      {"q_proj", "self_attn.q_proj", H * hd, C},          {"k_proj", "self_attn.k_proj", KV * hd, C},
      {"v_proj", "self_attn.v_proj", KV * hd, C},         {"o_proj", "self_attn.o_proj", C, H * hd},
      {"gate_proj", "mlp.gate_proj", c.intermediate_size, C}, {"up_proj", "mlp.up_proj", c.intermediate_size, C},
      {"down_proj", "mlp.down_proj", C, c.intermediate_size}};
  base("model.embed_tokens.weight", {c.vocab_size, C}, Init::Normal, std);
  for (uint32_t i = 0; i < c.num_hidden_layers; ++i)
    for (const Projection& p : projections) base(layer(i) + p.path + ".weight", {p.out, p.in}, Init::Normal, std);
  if (!c.tie_word_embeddings) base("lm_head.weight", {c.vocab_size, C}, Init::Normal, std);
  for (uint32_t i = 0; i < c.num_hidden_layers; ++i)
    for (const Projection& p : projections)
      if (adapted(p.module)) {
        g.param(layer(i) + p.path + ".lora_A.weight", {lora.rank, p.in}, Init::TorchLinear);
        g.param(layer(i) + p.path + ".lora_B.weight", {p.out, lora.rank}, Init::Zero);
      }
  for (uint32_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = layer(i);
    base(p + "input_layernorm.weight", {C}, Init::One);
    base(p + "post_attention_layernorm.weight", {C}, Init::One);
    if (c.attention_bias) {
      base(p + "self_attn.q_proj.bias", {H * hd}, Init::Zero);
      base(p + "self_attn.k_proj.bias", {KV * hd}, Init::Zero);
      base(p + "self_attn.v_proj.bias", {KV * hd}, Init::Zero);
    }
  }
  base("model.norm.weight", {C}, Init::One);

  // Node names are the module paths, as in the GPT.
  const double scale = adapters ? lora.alpha / lora.rank : 1.0;
  std::string x = g.embedding("model.embed_tokens", "input_ids", "model.embed_tokens.weight");
  for (uint32_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = layer(i);
    auto linear = [&](const Projection& proj, const std::string& in, bool bias = false) {
      const std::string name = p + proj.path, b = bias ? name + ".bias" : "";
      if (adapted(proj.module)) {
        const std::string dropped =
            lora.dropout > 0 ? g.node(name + ".lora_dropout", "dropout", {in}, {.p = lora.dropout}) : "";
        return g.lora(name, in, name + ".weight", name + ".lora_A.weight", name + ".lora_B.weight", scale, b, dropped);
      }
      return g.linear(name, in, name + ".weight", b);
    };
    std::string h = g.rms_norm(p + "input_layernorm", x, p + "input_layernorm.weight", c.rms_norm_eps);
    const std::string q = linear(projections[0], h, c.attention_bias);
    const std::string k = linear(projections[1], h, c.attention_bias);
    const std::string v = linear(projections[2], h, c.attention_bias);
    h = g.rope(p + "self_attn.rotary", q, k, v, H, KV, c.rope);
    h = linear(projections[3], g.attention(p + "self_attn", h, H));
    x = g.add(p + "self_attn.residual", x, h);
    h = g.rms_norm(p + "post_attention_layernorm", x, p + "post_attention_layernorm.weight", c.rms_norm_eps);
    h = g.glu(p + "mlp.act", linear(projections[4], h), linear(projections[5], h), ops::Activation::SiLU);
    x = g.add(p + "mlp.residual", x, linear(projections[6], h));
  }
  x = g.rms_norm("model.norm", x, "model.norm.weight", c.rms_norm_eps);
  g.set_output(g.linear("lm_head", x, c.tie_word_embeddings ? "model.embed_tokens.weight" : "lm_head.weight"));
  return g;
}

}  // namespace vkamp::models
