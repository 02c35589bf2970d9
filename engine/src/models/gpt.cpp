#include "vkamp/models/gpt.hpp"

#include <cmath>
#include <vector>

#include "vkamp/config_error.hpp"

namespace vkamp::models {

namespace {

// nanoGPT's initialisation: N(0, 0.02) for every matrix, and 0.02 /
// sqrt(2 n_layer) for the projections into the residual stream (GPT-2's
// scaling, so the stream's variance does not grow with depth).
constexpr double kInitStd = 0.02;

std::string block(uint32_t i) { return "transformer.h." + std::to_string(i) + "."; }

}  // namespace

graph::Graph gpt_graph(const GptConfig& c) {
  if (!c.vocab_size || !c.block_size || !c.n_layer || !c.n_head || !c.n_embd)
    throw ConfigError("gpt: vocab_size, block_size, n_layer, n_head and n_embd must all be at least 1");
  if (!(c.dropout >= 0 && c.dropout < 1)) throw ConfigError("gpt: dropout must be at least 0 and below 1");
  if (c.n_embd % c.n_head)
    throw ConfigError("gpt: n_embd " + std::to_string(c.n_embd) + " is not a multiple of n_head " +
                      std::to_string(c.n_head));
  using graph::Init;
  const uint32_t C = c.n_embd;
  const double proj_std = kInitStd / std::sqrt(2.0 * c.n_layer);
  graph::Graph g;
  g.set_origin("gpt");
  g.input("idx", graph::Shape::tokens(c.block_size));

  // Matrices first (see the header), then the vectors.
  g.param("transformer.wte.weight", {c.vocab_size, C}, Init::Normal, kInitStd);
  g.param("transformer.wpe.weight", {c.block_size, C}, Init::Normal, kInitStd);
  for (uint32_t i = 0; i < c.n_layer; ++i) {
    const std::string p = block(i);
    g.param(p + "attn.c_attn.weight", {3 * C, C}, Init::Normal, kInitStd);
    g.param(p + "attn.c_proj.weight", {C, C}, Init::Normal, proj_std);
    g.param(p + "mlp.c_fc.weight", {4 * C, C}, Init::Normal, kInitStd);
    g.param(p + "mlp.c_proj.weight", {C, 4 * C}, Init::Normal, proj_std);
  }
  for (uint32_t i = 0; i < c.n_layer; ++i) {
    const std::string p = block(i);
    for (const char* norm : {"ln_1", "ln_2"}) {
      g.param(p + norm + ".weight", {C}, Init::One);
      g.param(p + norm + ".bias", {C}, Init::Zero);
    }
    g.param(p + "attn.c_attn.bias", {3 * C}, Init::Zero);
    g.param(p + "attn.c_proj.bias", {C}, Init::Zero);
    g.param(p + "mlp.c_fc.bias", {4 * C}, Init::Zero);
    g.param(p + "mlp.c_proj.bias", {C}, Init::Zero);
  }
  g.param("transformer.ln_f.weight", {C}, Init::One);
  g.param("transformer.ln_f.bias", {C}, Init::Zero);

  // Node names are the module paths; a parameter is the module path plus
  // ".weight" or ".bias".
  // nanoGPT's nn.Dropout(config.dropout); none at all when it is 0.
  auto dropout = [&](const std::string& name, const std::string& in) {
    return c.dropout > 0 ? g.node(name, "dropout", {in}, {.p = c.dropout}) : in;
  };
  std::string x = g.embedding("transformer.embed", "idx", "transformer.wte.weight", "transformer.wpe.weight");
  x = dropout("transformer.drop", x);
  for (uint32_t i = 0; i < c.n_layer; ++i) {
    const std::string p = block(i);
    auto linear = [&](const std::string& name, const std::string& in) {
      return g.linear(p + name, in, p + name + ".weight", p + name + ".bias");
    };
    std::string h = g.layer_norm(p + "ln_1", x, p + "ln_1.weight", p + "ln_1.bias");
    h = linear("attn.c_attn", h);
    h = g.attention(p + "attn", h, c.n_head);
    h = dropout(p + "attn.resid_dropout", linear("attn.c_proj", h));
    x = g.add(p + "attn.residual", x, h);
    h = g.layer_norm(p + "ln_2", x, p + "ln_2.weight", p + "ln_2.bias");
    h = linear("mlp.c_fc", h);
    h = g.activation(p + "mlp.gelu", h, ops::Activation::GELU);
    h = dropout(p + "mlp.dropout", linear("mlp.c_proj", h));
    x = g.add(p + "mlp.residual", x, h);
  }
  x = g.layer_norm("transformer.ln_f", x, "transformer.ln_f.weight", "transformer.ln_f.bias");
  // The lm_head is tied: the token embedding is its weight.
  g.set_output(g.linear("lm_head", x, "transformer.wte.weight"));
  return g;
}

std::map<std::string, std::string> gpt_metadata(const GptConfig& c) {
  return {{"vkamp.model", "gpt"},
          {"vkamp.vocab_size", std::to_string(c.vocab_size)},
          {"vkamp.block_size", std::to_string(c.block_size)},
          {"vkamp.n_layer", std::to_string(c.n_layer)},
          {"vkamp.n_head", std::to_string(c.n_head)},
          {"vkamp.n_embd", std::to_string(c.n_embd)}};
}

GptConfig gpt_config_from_metadata(const std::map<std::string, std::string>& meta, const std::string& origin) {
  auto model = meta.find("vkamp.model");
  if (model == meta.end() || model->second != "gpt")
    throw ConfigError(origin + ": not a GPT (metadata vkamp.model is not \"gpt\")");
  auto number = [&](const std::string& key) {
    auto it = meta.find(key);
    if (it == meta.end()) throw ConfigError(origin + ": metadata " + key + " is missing");
    const std::string& v = it->second;
    if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos)
      throw ConfigError(origin + ": metadata " + key + " is not a count: '" + v + "'");
    return uint32_t(std::stoul(v));
  };
  GptConfig c;
  c.vocab_size = number("vkamp.vocab_size");
  c.block_size = number("vkamp.block_size");
  c.n_layer = number("vkamp.n_layer");
  c.n_head = number("vkamp.n_head");
  c.n_embd = number("vkamp.n_embd");
  return c;
}

}  // namespace vkamp::models
