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
    return Weight{graph::tensor_view(flat, format_bytes(fmt), tensors, name, "LlamaDecoder (not llama_graph's layout)"),
                  std::nullopt};
  };
}

LlamaDecoder::Weights LlamaDecoder::frozen_weights(const graph::FrozenStore& store) {
  return [&store](const std::string& name) {
    const graph::FrozenTensor& t = store.named(name);
    return Weight{store.view(t), t.blocks};
  };
}

// The activations of `n` token rows.
struct LlamaDecoder::Rows {
  std::unique_ptr<Buffer> ids, x, h, q, k, v, qkv, att, gate, up, stats;
  Rows(Context& ctx, const LlamaConfig& c, Format fmt, uint32_t n) {
    const size_t eb = format_bytes(fmt), C = c.hidden_size, Q = size_t(c.num_attention_heads) * c.head_size(),
                 KV = size_t(c.num_key_value_heads) * c.head_size();
    auto rows = [&](size_t elements) { return std::make_unique<Buffer>(ctx, size_t(n) * elements * eb); };
    ids = std::make_unique<Buffer>(ctx, size_t(n) * sizeof(uint32_t));
    x = rows(C);
    h = rows(C);
    q = rows(Q);
    k = rows(KV);
    v = rows(KV);
    att = rows(Q);
    qkv = rows(3 * Q);
    gate = rows(c.intermediate_size);
    up = rows(c.intermediate_size);
    stats = std::make_unique<Buffer>(ctx, size_t(n) * 2 * sizeof(float));
  }
};

LlamaDecoder::LlamaDecoder(Context& ctx, const LlamaConfig& c, Format fmt, Weights weights, uint32_t max_positions)
    : ctx_(ctx), c_(c), fmt_(fmt), weights_(std::move(weights)), max_positions_(max_positions) {
  llama_graph(c, max_positions);  // the same checks of the config (ConfigError)
  const size_t eb = format_bytes(fmt), C = c.hidden_size, Q = size_t(c.num_attention_heads) * c.head_size();
  one_ = std::make_unique<Rows>(ctx, c, fmt, 1);
  last_ = std::make_unique<Buffer>(ctx, C * eb);
  probs_ = std::make_unique<Buffer>(ctx, ops::attention_kept_elements(ctx, fmt, max_positions, uint32_t(Q),
                                                                      c.num_attention_heads) * eb);
  logits_ = std::make_unique<Buffer>(ctx, size_t(c.vocab_size) * eb);
  stats_ = std::make_unique<Buffer>(ctx, 2 * sizeof(float));
  const std::vector<float> table = ops::rope_table(c.rope, c.head_size(), max_positions);
  table_ = std::make_unique<Buffer>(ctx, table.size() * sizeof(float));
  table_->write(table);
  for (uint32_t i = 0; i < c.num_hidden_layers; ++i)
    cache_.push_back(std::make_unique<Buffer>(ctx, size_t(max_positions) * 3 * Q * eb));
  weight("model.embed_tokens.weight");
}

LlamaDecoder::~LlamaDecoder() = default;

LlamaDecoder::Weight LlamaDecoder::weight(const std::string& name) const {
  return weights_(name);
}

std::vector<float> LlamaDecoder::append(uint32_t token) { return run({token}, *one_); }

std::vector<float> LlamaDecoder::prefill(const std::vector<uint32_t>& tokens) {
  if (tokens.size() <= 1 || length_ > 0) {  // one row, or rows after cached ones: token by token
    std::vector<float> logits;
    for (uint32_t t : tokens) logits = append(t);
    return logits;
  }
  Rows rows(ctx_, c_, fmt_, uint32_t(tokens.size()));
  return run(tokens, rows);
}

std::vector<float> LlamaDecoder::run(const std::vector<uint32_t>& tokens, Rows& r) {
  const uint32_t n = uint32_t(tokens.size());
  if (length_ + n > max_positions_)
    throw Error("LlamaDecoder: the cache holds " + std::to_string(max_positions_) + " positions, " +
                std::to_string(length_) + " of them already; " + std::to_string(n) + " more do not fit");
  for (uint32_t token : tokens)
    if (token >= c_.vocab_size)
      throw Error("LlamaDecoder: token " + std::to_string(token) + " is not below the vocabulary's " +
                  std::to_string(c_.vocab_size));
  const uint32_t C = c_.hidden_size, H = c_.num_attention_heads, KVH = c_.num_key_value_heads, hd = c_.head_size();
  const uint32_t Q = H * hd, KV = KVH * hd, I = c_.intermediate_size, p = length_;
  const size_t eb = format_bytes(fmt_), row = size_t(3) * Q * eb;
  r.ids->write(tokens);
  Sequence seq(ctx_);
  seq.begin();
  const Weight table = weight("model.embed_tokens.weight");
  ops::embedding_forward(seq, fmt_, *r.ids, table.view, std::nullopt, *r.x, n, n, C, c_.vocab_size, table.blocks);
  auto linear = [&](const std::string& name, BufferView in, BufferView out, uint32_t rows, uint32_t n_in,
                    uint32_t n_out, bool bias = false) {
    ops::GemmEpilogue e;
    if (bias) e.bias = weight(name + ".bias").view;
    const Weight w = weight(name + ".weight");
    ops::linear_forward(seq, fmt_, in, w.view, out, rows, n_in, n_out, e, w.blocks);
  };
  auto norm = [&](const std::string& name, BufferView in, BufferView out, BufferView stats, uint32_t rows) {
    ops::rms_norm_forward(seq, fmt_, in, weight(name + ".weight").view, out, stats, rows, C, float(c_.rms_norm_eps));
  };
  // A prompt of n > 1 rows (prefill, from an empty cache) attends causally
  // over all of them; one row attends from the last position alone.
  const bool rows_at_once = n > 1;
  std::unique_ptr<Buffer> probs;
  if (rows_at_once)
    probs = std::make_unique<Buffer>(ctx_, ops::attention_kept_elements(ctx_, fmt_, n, Q, H) * eb);
  for (uint32_t i = 0; i < c_.num_hidden_layers; ++i) {
    const std::string L = "model.layers." + std::to_string(i) + ".";
    Buffer& cache = *cache_[i];
    norm(L + "input_layernorm", *r.x, *r.h, *r.stats, n);
    linear(L + "self_attn.q_proj", *r.h, *r.q, n, C, Q, c_.attention_bias);
    linear(L + "self_attn.k_proj", *r.h, *r.k, n, C, KV, c_.attention_bias);
    linear(L + "self_attn.v_proj", *r.h, *r.v, n, C, KV, c_.attention_bias);
    const ops::RopeShape rope{.rows = n, .seq = n, .heads = H, .kv_heads = KVH, .head_dim = hd, .first_position = p,
                              .table_positions = max_positions_};
    // Written whole, then copied into the cache: a row's offset there need
    // not meet the storage-buffer alignment a bound view must.
    ops::rope_forward(seq, fmt_, *table_, *r.q, *r.k, *r.v, *r.qkv, rope);
    seq.copy(*r.qkv, cache, n * row, 0, p * row);
    if (rows_at_once) {
      const ops::AttentionShape shape{.batch = 1, .seq = n, .channels = Q, .heads = H, .last_only = false};
      ops::attention_forward(seq, fmt_, *r.qkv, *r.att, *probs, shape);
    } else {
      const ops::AttentionShape shape{.batch = 1, .seq = p + 1, .channels = Q, .heads = H, .last_only = true};
      ops::attention_forward(seq, fmt_, BufferView(cache, 0, (p + 1) * row), *r.att, *probs_, shape);
    }
    linear(L + "self_attn.o_proj", *r.att, *r.h, n, Q, C);
    ops::add_forward(seq, fmt_, *r.x, *r.h, *r.x, n * C);
    norm(L + "post_attention_layernorm", *r.x, *r.h, *r.stats, n);
    linear(L + "mlp.gate_proj", *r.h, *r.gate, n, C, I);
    linear(L + "mlp.up_proj", *r.h, *r.up, n, C, I);
    ops::glu_forward(seq, fmt_, ops::Activation::SiLU, *r.gate, *r.up, *r.gate, n * I);
    linear(L + "mlp.down_proj", *r.gate, *r.h, n, I, C);
    ops::add_forward(seq, fmt_, *r.x, *r.h, *r.x, n * C);
  }
  // The logits of the last row alone (copied out: its offset need not be aligned for a view).
  seq.copy(*r.x, *last_, size_t(C) * eb, size_t(n - 1) * C * eb, 0);
  norm("model.norm", *last_, *r.h, *stats_, 1);
  linear(c_.tie_word_embeddings ? "model.embed_tokens" : "lm_head", *r.h, *logits_, 1, C, c_.vocab_size);
  seq.end();
  seq.run();
  length_ += n;
  std::vector<uint8_t> bytes(size_t(c_.vocab_size) * eb);
  logits_->read(bytes.data(), bytes.size());
  return unpack(fmt_, bytes);
}

}  // namespace vkamp::models
