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

#include "adamw_bounds.hpp"
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
#include "vkamp/train/trainer.hpp"

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

// The fixture's LoRA settings (lora_expected.safetensors' metadata).
models::LoraConfig lora_of(const io::TensorFile& lora) {
  models::LoraConfig lc;
  lc.rank = uint32_t(std::stoul(lora.metadata.at("lora_r")));
  lc.alpha = std::stod(lora.metadata.at("lora_alpha"));
  lc.targets.clear();
  const std::string& list = lora.metadata.at("lora_targets");
  for (size_t at = 0, next; at <= list.size(); at = next + 1) {
    next = std::min(list.find(',', at), list.size());
    lc.targets.push_back(list.substr(at, next - at));
  }
  return lc;
}

// The folder's base (frozen) and the fixture's initial adapters (masters).
void load_lora_model(train::Model& m, const Fixture& f, const io::TensorFile& lora) {
  train::load_hf_weights(f.dir, m);
  std::vector<float> w = m.read_master();
  for (const auto& t : m.tensors()) {
    ASSERT_TRUE(models::is_lora_adapter(t.name)) << t.name << " trains, but only the adapters should";
    const std::vector<float> v = lora.floats("init." + t.name, f.dir);
    ASSERT_EQ(v.size(), t.size) << t.name;
    std::copy(v.begin(), v.end(), w.begin() + t.offset);
  }
  m.write_master(w);
}

// The forward's and the adapters' gradients' bounds with LoRA on `lc`.
struct LoraBounds {
  double logits, grads;
};
LoraBounds lora_bounds(Format fmt, const Fixture& f, const models::LoraConfig& lc) {
  const uint32_t rows = f.batch * f.seq;
  const double adapted = double(f.cfg.num_hidden_layers) * lc.targets.size();
  const double sqrt_k = forward_sqrt_k(f.cfg, f.seq) + adapted * (std::sqrt(double(f.cfg.intermediate_size)) + std::sqrt(double(lc.rank)));
  return {bound_for(fmt, sqrt_k, forward_roundings(f.cfg) + 3 * adapted),
          bound_for(fmt, 2 * sqrt_k + 3 * adapted * std::sqrt(double(rows)), 2 * (forward_roundings(f.cfg) + 3 * adapted) + 1)};
}

TEST_P(LlamaLoraGolden, AdapterLogitsLossAndGradientsMatchPyTorch) {
  const auto& [name, fmt] = GetParam();
  const Fixture f = load(name);
  const io::TensorFile lora = io::read_safetensors(f.dir + "/lora_expected.safetensors");
  const models::LoraConfig lc = lora_of(lora);
  const uint32_t rows = f.batch * f.seq;
  train::Model m(ctx(), models::llama_graph(f.cfg, f.seq, lc), fmt, f.batch, /*seed=*/1, false, false);
  load_lora_model(m, f, lora);
  EXPECT_EQ(m.tensors().size(), 2 * f.cfg.num_hidden_layers * lc.targets.size());
  const graph::Graph plain = models::llama_graph(f.cfg, f.seq);
  uint64_t base = 0;
  for (int i : plain.param_indices()) base += graph::elements(plain.tensors()[i]);
  EXPECT_EQ(m.frozen().count(), base) << "every base tensor is frozen";

  const float scale = loss_scale(fmt);
  const double loss = golden_step(m, fmt, f);
  const std::string tag = name + " LoRA " + format_name(fmt) + " ";
  const LoraBounds b = lora_bounds(fmt, f, lc);
  const double logit_bound = b.logits;
  const std::vector<float> ref_logits = lora.floats("logits", f.dir);
  expect_close(tag + "logits", download(m.output(), fmt, ref_logits.size()), ref_logits, logit_bound);
  const double ref_loss = lora.floats("loss", f.dir).at(0);
  EXPECT_NEAR(loss, ref_loss, loss_tolerance(logit_bound, ref_logits, ref_loss, rows));

  std::vector<float> grads = download(m.grads(), fmt, m.param_elements());
  const double grad_bound = b.grads;
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

// Three AdamW steps of the adapters through the trainer (the base frozen,
// a static loss scale in 16 bits), against PyTorch's torch.optim.AdamW on
// the float64 model: the update w3 - w0 and the loss before each step,
// with adamw_bounds.hpp's bounds from the gradients' bound, as in the GPT
// test.
TEST_P(LlamaLoraGolden, ThreeStepsOfAdamWMatchPyTorch) {
  const auto& [name, fmt] = GetParam();
  const Fixture f = load(name);
  const io::TensorFile lora = io::read_safetensors(f.dir + "/lora_expected.safetensors");
  const models::LoraConfig lc = lora_of(lora);
  auto meta = [&](const char* key) { return std::stod(lora.metadata.at(key)); };
  config::TrainConfig c;
  c.precision = fmt;
  c.batch = f.batch;  // the fixture's batch is the whole set: one step per epoch
  c.epochs = uint32_t(meta("steps"));
  c.seed = 1;
  c.scaler.histogram_interval = 0;
  c.scaler.mode = fmt == Format::F32 ? config::LossScaleMode::None : config::LossScaleMode::Static;
  c.scaler.initial_loss_scale = loss_scale(fmt);
  auto& o = c.optimizer;
  o.kind = config::OptimizerKind::AdamW;
  o.schedule = config::LrSchedule::Constant;
  o.lr = meta("adamw.lr");
  o.beta1 = meta("adamw.beta1");
  o.beta2 = meta("adamw.beta2");
  o.eps = meta("adamw.eps");
  o.weight_decay = meta("adamw.weight_decay");
  data::HostData data{f.batch, f.seq, std::vector<float>(f.ids.begin(), f.ids.end()), f.targets, {}};
  train::Trainer t(ctx(), c, models::llama_graph(f.cfg, f.seq, lc), train::LossKind::SoftmaxXent, data);
  load_lora_model(t.model(), f, lora);
  const std::vector<float> w0 = t.model().read_master();
  std::vector<float> losses;
  double grad_norm = 0;  // the largest over the steps (unscaled)
  t.on_step = [&](const train::StepMetrics& s) {
    EXPECT_FALSE(s.skipped);
    losses.push_back(s.loss);
    grad_norm = std::max(grad_norm, double(s.grad_norm));
  };
  t.run();
  const std::vector<float> ref_losses = lora.floats("adamw.losses", f.dir);
  ASSERT_EQ(losses.size(), ref_losses.size());

  const std::vector<float> w3 = t.model().read_master();
  std::vector<double> delta, ref_delta, grad0, w0_all;
  for (const auto& tensor : t.model().tensors()) {
    const std::vector<float> ref3 = lora.floats("adamw.step3." + tensor.name, f.dir);
    const std::vector<float> g = lora.floats("grad." + tensor.name, f.dir);
    for (uint32_t i = 0; i < tensor.size; ++i) {
      delta.push_back(double(w3[tensor.offset + i]) - w0[tensor.offset + i]);
      ref_delta.push_back(double(ref3[i]) - w0[tensor.offset + i]);
      grad0.push_back(g[i]);
      w0_all.push_back(w0[tensor.offset + i]);
    }
  }
  const LoraBounds b = lora_bounds(fmt, f, lc);
  const double steps = double(ref_losses.size()), lr = o.lr;
  // The masters are fp32: each of the steps rounds w + dw once (a few u32 of |w|).
  const double master_ulps = 6 * rms(w0_all) / rms(ref_delta);
  const double delta_bound = nmse_bound(Format::F32, master_ulps) + adamw_update_bound(grad0, b.grads, lr, steps, ref_delta);
  const std::string tag = name + " LoRA " + format_name(fmt) + " ";
  expect_close(tag + "adamw update w3 - w0", std::vector<float>(delta.begin(), delta.end()),
               std::vector<float>(ref_delta.begin(), ref_delta.end()), delta_bound);
  // The adapters are few (hundreds of values), and in bf16 the gradients'
  // bound leaves only a handful resolved: a handful still tests the update.
  const Resolved res = adamw_resolved(grad0, b.grads, lr, steps, ref_delta);
  ASSERT_GE(res.index.size(), 5u) << "too few resolved gradients to test the update";
  std::vector<float> resolved, ref_resolved;
  for (size_t i : res.index) {
    resolved.push_back(float(delta[i]));
    ref_resolved.push_back(float(ref_delta[i]));
  }
  expect_close(tag + "adamw update, resolved gradients", resolved, ref_resolved,
               nmse_bound(Format::F32, master_ulps) + res.bound);
  // The first loss as the one-step test's. Later ones also move with the
  // weights' difference dw, to first order by at most |g| |dw|: dw as
  // measured after the last step (the steps' errors add up, so the earlier
  // ones are smaller), |g| the largest gradient norm of the run, doubled
  // for the gradient's change along dw.
  const std::vector<float> ref_logits = lora.floats("logits", f.dir);
  const double tol0 = loss_tolerance(b.logits, ref_logits, ref_losses[0], f.batch * f.seq);
  double dw = 0;
  for (size_t i = 0; i < delta.size(); ++i) dw += (delta[i] - ref_delta[i]) * (delta[i] - ref_delta[i]);
  dw = std::sqrt(dw);
  for (size_t k = 0; k < losses.size(); ++k) {
    const double tol = tol0 + (k ? 2 * grad_norm * dw : 0.0);
    std::printf("[golden] %-52s |d| %.3e  bound %.3e\n", (tag + "loss before step " + std::to_string(k + 1)).c_str(),
                std::abs(losses[k] - ref_losses[k]), tol);
    EXPECT_NEAR(losses[k], ref_losses[k], tol) << "step " << k + 1;
  }
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
