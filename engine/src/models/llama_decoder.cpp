#include "vkamp/models/llama_decoder.hpp"

#include <optional>

#include "vkamp/error.hpp"
#include "vkamp/ops/add.hpp"
#include "vkamp/ops/attention.hpp"
#include "vkamp/ops/embedding.hpp"
#include "vkamp/ops/gemm.hpp"
#include "vkamp/ops/glu.hpp"
#include "vkamp/ops/layer_norm.hpp"
#include "vkamp/ops/rope.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::models {

LlamaDecoder::Weights LlamaDecoder::flat_weights(const Buffer& flat, Format fmt,
                                                 const std::vector<graph::ParamTensor>& tensors) {
  return [&flat, fmt, tensors](const std::string& name) {
    return graph::tensor_view(flat, format_bytes(fmt), tensors, name, "LlamaDecoder (not llama_graph's layout)");
  };
}

LlamaDecoder::LlamaDecoder(Context& ctx, const LlamaConfig& c, Format fmt, Weights weights, uint32_t max_positions)
    : ctx_(ctx), c_(c), fmt_(fmt), weights_(std::move(weights)), max_positions_(max_positions) {
  llama_graph(c, max_positions);  // the same checks of the config (ConfigError)
  const size_t eb = format_bytes(fmt), C = c.hidden_size, Q = size_t(c.num_attention_heads) * c.head_size(),
               KV = size_t(c.num_key_value_heads) * c.head_size();
  auto rows = [&](size_t elements) { return std::make_unique<Buffer>(ctx, elements * eb); };
  ids_ = std::make_unique<Buffer>(ctx, sizeof(uint32_t));
  x_ = rows(C);
  h_ = rows(C);
  q_ = rows(Q);
  k_ = rows(KV);
  v_ = rows(KV);
  att_ = rows(Q);
  qkv_ = rows(3 * Q);
  gate_ = rows(c.intermediate_size);
  up_ = rows(c.intermediate_size);
  probs_ = rows(ops::attention_kept_elements(ctx, fmt, max_positions, uint32_t(Q), c.num_attention_heads));
  logits_ = rows(c.vocab_size);
  stats_ = std::make_unique<Buffer>(ctx, 2 * sizeof(float));
  const std::vector<float> table = ops::rope_table(c.rope, c.head_size(), max_positions);
  table_ = std::make_unique<Buffer>(ctx, table.size() * sizeof(float));
  table_->write(table);
  for (uint32_t i = 0; i < c.num_hidden_layers; ++i) cache_.push_back(rows(size_t(max_positions) * 3 * Q));
  weight("model.embed_tokens.weight");
}

LlamaDecoder::~LlamaDecoder() = default;

BufferView LlamaDecoder::weight(const std::string& name) const {
  return weights_(name);
}

std::vector<float> LlamaDecoder::append(uint32_t token) {
  if (length_ >= max_positions_)
    throw Error("LlamaDecoder: the cache holds its " + std::to_string(max_positions_) + " positions already");
  if (token >= c_.vocab_size)
    throw Error("LlamaDecoder: token " + std::to_string(token) + " is not below the vocabulary's " +
                std::to_string(c_.vocab_size));
  const uint32_t C = c_.hidden_size, H = c_.num_attention_heads, KVH = c_.num_key_value_heads, hd = c_.head_size();
  const uint32_t Q = H * hd, KV = KVH * hd, I = c_.intermediate_size, p = length_;
  const size_t eb = format_bytes(fmt_), row = size_t(3) * Q * eb;
  Sequence seq(ctx_);
  seq.begin();
  seq.fill(*ids_, token);
  ops::embedding_forward(seq, fmt_, *ids_, weight("model.embed_tokens.weight"), std::nullopt, *x_, 1, 1, C,
                         c_.vocab_size);
  auto linear = [&](const std::string& name, BufferView in, BufferView out, uint32_t n_in, uint32_t n_out,
                    bool bias = false) {
    ops::GemmEpilogue e;
    if (bias) e.bias = weight(name + ".bias");
    ops::linear_forward(seq, fmt_, in, weight(name + ".weight"), out, 1, n_in, n_out, e);
  };
  auto norm = [&](const std::string& name, BufferView in, BufferView out) {
    ops::rms_norm_forward(seq, fmt_, in, weight(name + ".weight"), out, *stats_, 1, C, float(c_.rms_norm_eps));
  };
  for (uint32_t i = 0; i < c_.num_hidden_layers; ++i) {
    const std::string L = "model.layers." + std::to_string(i) + ".";
    Buffer& cache = *cache_[i];
    norm(L + "input_layernorm", *x_, *h_);
    linear(L + "self_attn.q_proj", *h_, *q_, C, Q, c_.attention_bias);
    linear(L + "self_attn.k_proj", *h_, *k_, C, KV, c_.attention_bias);
    linear(L + "self_attn.v_proj", *h_, *v_, C, KV, c_.attention_bias);
    const ops::RopeShape rope{.rows = 1, .seq = 1, .heads = H, .kv_heads = KVH, .head_dim = hd, .first_position = p,
                              .table_positions = max_positions_};
    // Written whole, then copied into the cache: a row's offset there need
    // not meet the storage-buffer alignment a bound view must.
    ops::rope_forward(seq, fmt_, *table_, *q_, *k_, *v_, *qkv_, rope);
    seq.copy(*qkv_, cache, row, 0, p * row);
    const ops::AttentionShape shape{.batch = 1, .seq = p + 1, .channels = Q, .heads = H, .last_only = true};
    ops::attention_forward(seq, fmt_, BufferView(cache, 0, (p + 1) * row), *att_, *probs_, shape);
    linear(L + "self_attn.o_proj", *att_, *h_, Q, C);
    ops::add_forward(seq, fmt_, *x_, *h_, *x_, C);
    norm(L + "post_attention_layernorm", *x_, *h_);
    linear(L + "mlp.gate_proj", *h_, *gate_, C, I);
    linear(L + "mlp.up_proj", *h_, *up_, C, I);
    ops::glu_forward(seq, fmt_, ops::Activation::SiLU, *gate_, *up_, *gate_, I);
    linear(L + "mlp.down_proj", *gate_, *h_, I, C);
    ops::add_forward(seq, fmt_, *x_, *h_, *x_, C);
  }
  norm("model.norm", *x_, *h_);
  linear(c_.tie_word_embeddings ? "model.embed_tokens" : "lm_head", *h_, *logits_, C, c_.vocab_size);
  seq.end();
  seq.run();
  ++length_;
  std::vector<uint8_t> bytes(size_t(c_.vocab_size) * eb);
  logits_->read(bytes.data(), bytes.size());
  return unpack(fmt_, bytes);
}

}  // namespace vkamp::models
