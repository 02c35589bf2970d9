#include "vkamp/models/gpt_decoder.hpp"

#include "vkamp/error.hpp"
#include "vkamp/ops/activation.hpp"
#include "vkamp/ops/add.hpp"
#include "vkamp/ops/attention.hpp"
#include "vkamp/ops/embedding.hpp"
#include "vkamp/ops/gemm.hpp"
#include "vkamp/ops/layer_norm.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::models {

namespace {

std::string block(uint32_t i) { return "transformer.h." + std::to_string(i) + "."; }

}  // namespace

GptDecoder::GptDecoder(Context& ctx, const GptConfig& c, Format fmt, const Buffer& working,
                       const std::vector<graph::ParamTensor>& tensors)
    : ctx_(ctx), c_(c), fmt_(fmt), working_(working), tensors_(tensors) {
  gpt_graph(c);  // the same checks of the config (ConfigError)
  const size_t eb = format_bytes(fmt), C = c.n_embd;
  auto rows = [&](size_t elements) { return std::make_unique<Buffer>(ctx, elements * eb); };
  ids_ = std::make_unique<Buffer>(ctx, sizeof(uint32_t));
  pos_ = rows(C);
  x_ = rows(C);
  h_ = rows(C);
  qkv_ = rows(3 * C);
  att_ = rows(C);
  mlp_ = rows(4 * C);
  probs_ = rows(ops::attention_kept_elements(ctx, fmt, c.block_size, C, c.n_head));
  logits_ = rows(c.vocab_size);
  mean_rstd_ = std::make_unique<Buffer>(ctx, 2 * sizeof(float));
  for (uint32_t i = 0; i < c.n_layer; ++i) cache_.push_back(rows(size_t(c.block_size) * 3 * C));
  for (const char* name : {"transformer.wte.weight", "transformer.wpe.weight", "transformer.ln_f.weight"}) weight(name);
}

GptDecoder::~GptDecoder() = default;

BufferView GptDecoder::weight(const std::string& name) const {
  return graph::tensor_view(working_, format_bytes(fmt_), tensors_, name, "GptDecoder (not gpt_graph's layout)");
}

std::vector<float> GptDecoder::append(uint32_t token) {
  if (length_ >= c_.block_size)
    throw Error("GptDecoder: the cache holds block_size = " + std::to_string(c_.block_size) + " positions already");
  if (token >= c_.vocab_size)
    throw Error("GptDecoder: token " + std::to_string(token) + " is not below the vocabulary's " +
                std::to_string(c_.vocab_size));
  const uint32_t C = c_.n_embd, p = length_;
  const size_t eb = format_bytes(fmt_);
  Sequence seq(ctx_);
  seq.begin();
  // x = wte[token] + wpe[p]: the position's row copied out first, as the
  // embedding reads a window's rows from position 0.
  const BufferView wpe = weight("transformer.wpe.weight");
  seq.fill(*ids_, token);
  seq.copy(working_, *pos_, C * eb, wpe.offset + size_t(p) * C * eb, 0);
  ops::embedding_forward(seq, fmt_, *ids_, weight("transformer.wte.weight"), BufferView(*pos_), *x_, 1, 1, C, c_.vocab_size);
  auto linear = [&](const std::string& name, BufferView in, BufferView out, uint32_t n_in, uint32_t n_out,
                    std::optional<ops::Activation> act = std::nullopt) {
    ops::GemmEpilogue e;
    e.bias = weight(name + ".bias");
    e.act = act;
    ops::linear_forward(seq, fmt_, in, weight(name + ".weight"), out, 1, n_in, n_out, e);
  };
  auto norm = [&](const std::string& name, BufferView in, BufferView out) {
    ops::layer_norm_forward(seq, fmt_, in, weight(name + ".weight"), weight(name + ".bias"), out, *mean_rstd_, 1, C);
  };
  for (uint32_t i = 0; i < c_.n_layer; ++i) {
    const std::string b = block(i);
    Buffer& cache = *cache_[i];
    norm(b + "ln_1", *x_, *h_);
    linear(b + "attn.c_attn", *h_, *qkv_, C, 3 * C);
    seq.copy(*qkv_, cache, 3 * C * eb, 0, size_t(p) * 3 * C * eb);
    const ops::AttentionShape shape{.batch = 1, .seq = p + 1, .channels = C, .heads = c_.n_head, .last_only = true};
    ops::attention_forward(seq, fmt_, BufferView(cache, 0, size_t(p + 1) * 3 * C * eb), *att_, *probs_, shape);
    linear(b + "attn.c_proj", *att_, *h_, C, C);
    ops::add_forward(seq, fmt_, *x_, *h_, *x_, C);
    norm(b + "ln_2", *x_, *h_);
    linear(b + "mlp.c_fc", *h_, *mlp_, C, 4 * C, ops::Activation::GELU);
    linear(b + "mlp.c_proj", *mlp_, *h_, 4 * C, C);
    ops::add_forward(seq, fmt_, *x_, *h_, *x_, C);
  }
  norm("transformer.ln_f", *x_, *h_);
  // The lm_head is tied to the token embedding, without a bias.
  ops::linear_forward(seq, fmt_, *h_, weight("transformer.wte.weight"), *logits_, 1, C, c_.vocab_size);
  seq.end();
  seq.run();
  ++length_;
  std::vector<uint8_t> bytes(size_t(c_.vocab_size) * eb);
  logits_->read(bytes.data(), bytes.size());
  return unpack(fmt_, bytes);
}

}  // namespace vkamp::models
