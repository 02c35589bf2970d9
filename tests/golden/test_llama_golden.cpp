// The Llama golden tests: tests/golden/make_llama_fixtures.py wrote three
// tiny random Llama-family models in Hugging Face's folder layout (grouped
// query heads, tied and untied lm_head, Qwen2's q/k/v biases, explicit
// head_dim, rope_theta 1e4, 5e5 with Llama 3's scaling, and 1e6; weights in
// F32, BF16, and F16 over two shards), with the logits, the loss and every
// gradient that a float64 PyTorch model written from transformers' code
// computes on one batch. vkamp reads each folder with its own loader
// (config.json, safetensors headers and shards) and reproduces them on the
// GPU in fp32, and in fp16 and bf16 with a static loss scale.
//
// Bounds as in test_gpt_golden.cpp: fp32 errs by about sqrt(k) u32 per sum
// of k terms on a value's path; each 16-bit stage (a value stored in the
// format: working weights, op outputs, gradients) adds an independent
// rounding of up to u, their RMS adding in quadrature, with a factor 4 for
// the gains RMSNorm and softmax pass errors on with. The weights come in
// the file's dtype: a BF16 file run in fp16 is exact (8 bits fit in 11), an
// F32 or F16 file run in bf16 rounds once more, counted as the weights'
// stage. The reference is float64, so nothing of PyTorch's own rounding
// enters the bound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "golden_step.hpp"
#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "support/test_paths.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/models/hf_checkpoint.hpp"
#include "vkamp/models/llama.hpp"
#include "vkamp/train/hf_weights.hpp"
#include "vkamp/train/model.hpp"

namespace vkamp::test {
namespace {

struct Fixture {
  std::string dir;
  models::LlamaConfig cfg;
  io::TensorFile expected;
  std::vector<uint32_t> ids, targets;
  uint32_t batch = 0, seq = 0;
};

Fixture load(const std::string& name) {
  Fixture f;
  f.dir = VKAMP_TEST_DIR(VKAMP_GOLDEN_DIR) + "/" + name;
  f.cfg = models::read_hf_config(f.dir);
  f.expected = io::read_safetensors(f.dir + "/expected.safetensors");
  f.ids = token_ids(f.expected, "input_ids", f.dir);
  f.targets = token_ids(f.expected, "targets", f.dir);
  const io::Tensor* shape = f.expected.find("input_ids");
  if (shape->shape.size() != 2) throw std::runtime_error(f.dir + ": input_ids is not [B, T]");
  f.batch = uint32_t(shape->shape[0]);
  f.seq = uint32_t(shape->shape[1]);
  return f;
}

// sqrt(k) over the sums on a logit's path: per block two RMSNorms (C), q,
// k and v (C), the scores (hd), P V (T), o_proj (H hd), gate and up (C),
// down (I); then the final norm and the lm_head (C each).
double forward_sqrt_k(const models::LlamaConfig& c, uint32_t T) {
  const double C = c.hidden_size, hd = c.head_size(), H = c.num_attention_heads, I = c.intermediate_size;
  const double block = 2 * std::sqrt(C) + std::sqrt(C) + std::sqrt(hd) + std::sqrt(double(T)) + std::sqrt(H * hd) +
                       std::sqrt(C) + std::sqrt(I);
  return c.num_hidden_layers * block + 2 * std::sqrt(C);
}
double gradient_sqrt_k(const models::LlamaConfig& c, uint32_t T, uint32_t rows) {
  return 2 * forward_sqrt_k(c, T) + (7 * c.num_hidden_layers + 2) * std::sqrt(double(rows));
}
// 16-bit stages on a logit's path: the embedding's table and output; per
// block the two norms' weights and outputs (4), q, k, v's weights, biases
// and outputs (9), rope's output, the scores, the probabilities and P V
// (4), o_proj's weight and output (2), the residual sums (2), gate and
// up's weights and outputs (4), glu's output, down's weight and output (3);
// the final norm (2) and the lm_head (2).
double forward_roundings(const models::LlamaConfig& c) { return 2 + c.num_hidden_layers * 28.0 + 4; }
double gradient_roundings(const models::LlamaConfig& c) { return 2 * forward_roundings(c) + 1; }

float loss_scale(Format fmt) { return fmt == Format::F32 ? 1.0f : 1024.0f; }

double bound_for(Format fmt, double sqrt_k, double roundings) {
  double b = nmse_bound(Format::F32, sqrt_k);
  if (fmt != Format::F32) b += 16 * roundings / 3 * unit_roundoff(fmt) * unit_roundoff(fmt);
  return b;
}

void expect_close(const std::string& label, const std::vector<float>& out, const std::vector<float>& ref,
                  double bound) {
  double e = 0, n = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    e += (double(out[i]) - ref[i]) * (double(out[i]) - ref[i]);
    n += double(ref[i]) * ref[i];
  }
  std::printf("[golden] %-52s nmse %.3e  bound %.3e\n", label.c_str(), n > 0 ? e / n : e, bound);
  EXPECT_TRUE(close_to(out, to_double(ref), bound)) << label;
}

// One golden step on the fixture's batch (16-bit formats at a static
// scale of 1024); returns the loss.
double golden_step(train::Model& m, Format fmt, const Fixture& f) {
  Buffer x(ctx(), f.ids.size() * 4), y(ctx(), f.targets.size() * 4);
  x.write(f.ids);
  y.write(f.targets);
  return golden_forward_backward(m, fmt, x, y, f.batch, f.seq, f.cfg.vocab_size, loss_scale(fmt));
}

// As in the GPT test: the loss moves by at most 2 max|dz|, max|dz| taken as
// 4 times the logits' RMS error; the fp32 loss adds a few u32 per row.
double loss_tolerance(double logit_bound, const std::vector<float>& ref_logits, double ref_loss, uint32_t rows) {
  double rms = 0;
  for (float v : ref_logits) rms += double(v) * v;
  rms = std::sqrt(rms / ref_logits.size());
  return 8 * std::sqrt(logit_bound) * rms + (4.0 + rows) * 0x1p-24 * ref_loss;
}

using Case = std::tuple<std::string, Format>;

class LlamaGolden : public GpuTestP<Case> {};

TEST_P(LlamaGolden, LogitsLossAndGradientsMatchPyTorch) {
  const auto& [name, fmt] = GetParam();
  const Fixture f = load(name);
  const uint32_t rows = f.batch * f.seq;
  train::Model m(ctx(), models::llama_graph(f.cfg, f.seq), fmt, f.batch, /*seed=*/1, false, false);
  train::load_hf_weights(f.dir, m);

  const float scale = loss_scale(fmt);
  const double loss = golden_step(m, fmt, f);
  const std::string tag = name + " " + format_name(fmt) + " ";

  const std::vector<float> ref_logits = f.expected.floats("logits", f.dir);
  const double logit_bound = bound_for(fmt, forward_sqrt_k(f.cfg, f.seq), forward_roundings(f.cfg));
  expect_close(tag + "logits", download(m.output(), fmt, ref_logits.size()), ref_logits, logit_bound);

  const double ref_loss = f.expected.floats("loss", f.dir).at(0);
  const double loss_tol = loss_tolerance(logit_bound, ref_logits, ref_loss, rows);
  std::printf("[golden] %-52s |d| %.3e  bound %.3e\n", (tag + "loss").c_str(), std::abs(loss - ref_loss), loss_tol);
  EXPECT_NEAR(loss, ref_loss, loss_tol);

  // Per tensor `rows` times looser than all of them together: a gain's or
  // bias's gradient sums terms of mixed signs over the rows.
  std::vector<float> grads = download(m.grads(), fmt, m.param_elements());
  const double grad_bound = bound_for(fmt, gradient_sqrt_k(f.cfg, f.seq, rows), gradient_roundings(f.cfg));
  std::vector<float> all, all_ref;
  for (const auto& t : m.tensors()) {
    std::vector<float> g(grads.begin() + t.offset, grads.begin() + t.offset + t.size);
    for (float& v : g) v /= scale;
    const std::vector<float> ref = f.expected.floats("grad." + t.name, f.dir);
    ASSERT_EQ(ref.size(), g.size()) << t.name;
    expect_close(tag + "grad " + t.name, g, ref, rows * grad_bound);
    all.insert(all.end(), g.begin(), g.end());
    all_ref.insert(all_ref.end(), ref.begin(), ref.end());
  }
  expect_close(tag + "gradients (all)", all, all_ref, grad_bound);
}

// The same batch with LoRA adapters on the metadata's targets, the base
// frozen (held in the run's format only): the logits, the loss, and each
// adapter's gradient. Each adapted projection adds two sums (over `in` and
// r) and three 16-bit stages (u = x A^T and the two working copies) to the
// forward; an adapter's gradient sums over the rows (dB, dA) and the
// outputs (du), which gradient_sqrt_k's terms already exceed.
class LlamaLoraGolden : public GpuTestP<Case> {};

TEST_P(LlamaLoraGolden, AdapterLogitsLossAndGradientsMatchPyTorch) {
  const auto& [name, fmt] = GetParam();
  const Fixture f = load(name);
  const io::TensorFile lora = io::read_safetensors(f.dir + "/lora_expected.safetensors");
  models::LoraConfig lc;
  lc.rank = uint32_t(std::stoul(lora.metadata.at("lora_r")));
  lc.alpha = std::stod(lora.metadata.at("lora_alpha"));
  lc.targets.clear();
  for (size_t at = 0, next; at <= lora.metadata.at("lora_targets").size(); at = next + 1) {
    const std::string& list = lora.metadata.at("lora_targets");
    next = std::min(list.find(',', at), list.size());
    lc.targets.push_back(list.substr(at, next - at));
  }
  const uint32_t rows = f.batch * f.seq;
  train::Model m(ctx(), models::llama_graph(f.cfg, f.seq, lc), fmt, f.batch, /*seed=*/1, false, false);
  train::load_hf_weights(f.dir, m);
  std::vector<float> w = m.read_master();
  for (const auto& t : m.tensors()) {
    ASSERT_TRUE(models::is_lora_adapter(t.name)) << t.name << " trains, but only the adapters should";
    const std::vector<float> v = lora.floats("init." + t.name, f.dir);
    ASSERT_EQ(v.size(), t.size) << t.name;
    std::copy(v.begin(), v.end(), w.begin() + t.offset);
  }
  m.write_master(w);
  EXPECT_EQ(m.tensors().size(), 2 * f.cfg.num_hidden_layers * lc.targets.size());
  const graph::Graph plain = models::llama_graph(f.cfg, f.seq);
  uint64_t base = 0;
  for (int i : plain.param_indices()) base += graph::elements(plain.tensors()[i]);
  EXPECT_EQ(m.frozen().count(), base) << "every base tensor is frozen";

  const float scale = loss_scale(fmt);
  const double loss = golden_step(m, fmt, f);
  const std::string tag = name + " LoRA " + format_name(fmt) + " ";
  const double adapted = double(f.cfg.num_hidden_layers) * lc.targets.size();
  const double sqrt_k = forward_sqrt_k(f.cfg, f.seq) + adapted * (std::sqrt(double(f.cfg.intermediate_size)) + std::sqrt(double(lc.rank)));
  const double logit_bound = bound_for(fmt, sqrt_k, forward_roundings(f.cfg) + 3 * adapted);
  const std::vector<float> ref_logits = lora.floats("logits", f.dir);
  expect_close(tag + "logits", download(m.output(), fmt, ref_logits.size()), ref_logits, logit_bound);
  const double ref_loss = lora.floats("loss", f.dir).at(0);
  EXPECT_NEAR(loss, ref_loss, loss_tolerance(logit_bound, ref_logits, ref_loss, rows));

  std::vector<float> grads = download(m.grads(), fmt, m.param_elements());
  const double grad_bound =
      bound_for(fmt, 2 * sqrt_k + 3 * adapted * std::sqrt(double(rows)), 2 * (forward_roundings(f.cfg) + 3 * adapted) + 1);
  std::vector<float> all, all_ref;
  for (const auto& t : m.tensors()) {
    std::vector<float> g(grads.begin() + t.offset, grads.begin() + t.offset + t.size);
    for (float& v : g) v /= scale;
    const std::vector<float> ref = lora.floats("grad." + t.name, f.dir);
    expect_close(tag + "grad " + t.name, g, ref, rows * grad_bound);
    all.insert(all.end(), g.begin(), g.end());
    all_ref.insert(all_ref.end(), ref.begin(), ref.end());
  }
  expect_close(tag + "adapter gradients (all)", all, all_ref, grad_bound);
}

INSTANTIATE_TEST_SUITE_P(Fixture, LlamaLoraGolden,
                         ::testing::Combine(::testing::Values("llama_gqa", "qwen2_bias"),
                                            ::testing::Values(Format::F32, Format::F16, Format::BF16)),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return std::get<0>(i.param) + "_" + format_name(std::get<1>(i.param));
                         });

INSTANTIATE_TEST_SUITE_P(Fixture, LlamaGolden,
                         ::testing::Combine(::testing::Values("llama_gqa", "llama3_tied", "qwen2_bias"),
                                            ::testing::Values(Format::F32, Format::F16, Format::BF16)),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return std::get<0>(i.param) + "_" + format_name(std::get<1>(i.param));
                         });

}  // namespace
}  // namespace vkamp::test
