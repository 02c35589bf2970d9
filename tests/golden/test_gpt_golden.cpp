// The GPT golden test (llm.c's test_gpt2): tests/golden/make_gpt_fixture.py
// wrote, with fp32 PyTorch, a small nanoGPT GPT's initial weights, a batch
// of token windows, the logits, the loss, every gradient, and the weights
// and losses of 3 AdamW steps (decay on matrices only, clipping at a norm
// the gradients exceed). vkamp's GPT (models/gpt.hpp) reproduces them on the
// GPU in fp32, and in fp16, bf16 and cb16 with a static loss scale.
//
// Error bounds, as in test_golden.cpp (u32 = 2^-24, u16 = 2^-11;
// nmse_bound(fmt, n) allows an RMS relative error of about 2.3 n u):
//  - fp32: each GEMM or reduction of k terms on a value's path errs by about
//    sqrt(k) u32 relative to its result (random-walk rounding; the two sides
//    sum in different orders, so nothing cancels). They add up over the path.
//  - fp16, bf16 and cb16: each value stored in the 16-bit format on the path
//    (working weights, each op's output, each gradient) is one rounding
//    stage, an error of at most u relative (2^-11 for fp16, 2^-8 for bf16,
//    2^-10 for cb16; RMS u / sqrt(3)), independent of the other stages, so n stages
//    add in quadrature to an RMS of sqrt(n / 3) u. The residual
//    stream carries earlier errors forward with a gain of about 1 (pre-
//    LayerNorm blocks add to it and never rescale it); a LayerNorm (division
//    by the row's std) and the softmax pass errors on with gains of a few,
//    which a factor 4 on the RMS covers: NMSE 16 n u^2 / 3. Every value
//    the bound rests on is far above the formats' smallest normals (the loss
//    scale keeps the gradients there), so no absolute term is needed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "support/test_paths.hpp"
#include "adamw_bounds.hpp"
#include "golden_step.hpp"
#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/ops/losses.hpp"
#include "vkamp/models/gpt.hpp"
#include "vkamp/train/model.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

struct GptGolden {
  std::string path;
  io::TensorFile file;
  models::GptConfig cfg;
  uint32_t batch = 0, rows = 0;  // rows = batch x block_size positions
  std::vector<uint32_t> idx, targets;
  std::vector<float> logits, losses;
  double loss = 0;

  double meta(const std::string& key) const { return std::stod(file.metadata.at(key)); }

  // The tensors `prefix` + <parameter name> in the model's flat layout.
  std::vector<float> flat(const train::Model& m, const std::string& prefix) const {
    std::vector<float> w(m.param_elements(), 0.0f);
    for (const auto& t : m.tensors()) {
      auto v = file.floats(prefix + t.name, path);
      if (v.size() != t.size) throw std::runtime_error(path + ": " + prefix + t.name + " has the wrong size");
      std::copy(v.begin(), v.end(), w.begin() + t.offset);
    }
    return w;
  }
};

GptGolden load() {
  GptGolden g;
  g.path = VKAMP_TEST_DIR(VKAMP_GOLDEN_DIR) + "/gpt.safetensors";
  g.file = io::read_safetensors(g.path);
  g.cfg = models::gpt_config_from_metadata(g.file.metadata, g.path);
  g.idx = token_ids(g.file, "idx", g.path);
  g.targets = token_ids(g.file, "targets", g.path);
  g.rows = uint32_t(g.idx.size());
  g.batch = g.rows / g.cfg.block_size;
  g.logits = g.file.floats("logits", g.path);
  g.loss = g.file.floats("loss", g.path).at(0);
  g.losses = g.file.floats("adamw.losses", g.path);
  return g;
}

// ---- Error budgets from the config (see the top of the file) ----------------

// sqrt(k) over the sums on a logit's path: per block two LayerNorms (mean
// and variance over C), c_attn (C), the scores (head dim), P V (T), c_proj
// (C), c_fc (C) and the MLP's c_proj (4C); then ln_f and the lm_head (C).
double forward_sqrt_k(const models::GptConfig& c) {
  const double C = c.n_embd, hd = double(c.n_embd) / c.n_head, T = c.block_size;
  const double block = 2 * 2 * std::sqrt(C) + std::sqrt(C) + std::sqrt(hd) + std::sqrt(T) + std::sqrt(C) +
                       std::sqrt(C) + std::sqrt(4 * C);
  return c.n_layer * block + 2 * std::sqrt(C) + std::sqrt(C);
}

// The backward's sums mirror the forward's (each GEMM's dX sums over its
// outputs, each dW over the rows, the softmax and LayerNorm backward over
// their rows), so about twice the forward plus the dW sums over the rows.
double gradient_sqrt_k(const models::GptConfig& c, uint32_t rows) {
  return 2 * forward_sqrt_k(c) + (4 * c.n_layer + 1) * std::sqrt(double(rows));
}

// fp16 stages on a logit's path: the embedding (two working tables and
// their sum); per block, the two LayerNorms' outputs and gains and biases
// (6), each of the four Linears' weights, bias and output (12), the scores,
// the probabilities and P V (3), the GELU and the two residual sums (3);
// ln_f (3) and the lm_head's output (1).
double forward_roundings(const models::GptConfig& c) { return 3 + c.n_layer * 24.0 + 4; }
// The backward rounds each gradient on the way back once more per stage.
double gradient_roundings(const models::GptConfig& c) { return 2 * forward_roundings(c) + 1; }

double bound_for(Format fmt, double sqrt_k, double roundings) {
  double b = nmse_bound(Format::F32, sqrt_k);
  if (fmt != Format::F32) b += 16 * roundings / 3 * unit_roundoff(fmt) * unit_roundoff(fmt);
  return b;
}

std::vector<double> real_params(const train::Model& m, const std::vector<float>& flat,
                                const graph::ParamTensor* only = nullptr) {
  std::vector<double> out;
  for (const auto& t : m.tensors())
    if (!only || only == &t) out.insert(out.end(), flat.begin() + t.offset, flat.begin() + t.offset + t.size);
  return out;
}

void expect_close(Format fmt, const std::string& what, const std::vector<double>& out, const std::vector<double>& ref,
                  double bound) {
  double e = 0, n = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    e += (out[i] - ref[i]) * (out[i] - ref[i]);
    n += ref[i] * ref[i];
  }
  std::printf("[golden] gpt %-6s %-44s nmse %.3e  bound %.3e\n", format_name(fmt), what.c_str(), n > 0 ? e / n : e,
              bound);
  std::vector<float> as_float(out.begin(), out.end());
  EXPECT_TRUE(close_to(as_float, ref, bound)) << what;
}

float loss_scale(Format fmt) { return fmt == Format::F32 ? 1.0f : 1024.0f; }

class GptGoldenTest : public GpuTestP<Format> {};

TEST_P(GptGoldenTest, ForwardLossAndGradientsMatchPyTorch) {
  const Format fmt = GetParam();
  const GptGolden g = load();
  const uint32_t V = g.cfg.vocab_size;
  train::Model m(ctx(), models::gpt_graph(g.cfg), fmt, g.batch, /*seed=*/1, false, false);
  m.write_master(g.flat(m, "init."));

  const float scale = loss_scale(fmt);
  Buffer x(ctx(), g.idx.size() * 4), y(ctx(), g.targets.size() * 4);
  x.write(g.idx);
  y.write(g.targets);
  const double got = golden_forward_backward(m, fmt, x, y, g.batch, g.cfg.block_size, V, scale);

  const double logit_bound = bound_for(fmt, forward_sqrt_k(g.cfg), forward_roundings(g.cfg));
  const auto ref_logits = to_double(g.logits);
  const auto logits = download(m.output(), fmt, ref_logits.size());
  expect_close(fmt, "logits", to_double(logits), ref_logits, logit_bound);

  // The loss moves by at most 2 max|dz| (the softmax minus one-hot has an
  // L1 norm of at most 2 per row), with max|dz| taken as 4 times the
  // logits' RMS error bound; the fp32 loss itself adds a few u32 per row.
  const double loss_tol = 2 * 4 * std::sqrt(logit_bound) * rms(ref_logits) + (4.0 + g.rows) * 0x1p-24 * g.loss;
  std::printf("[golden] gpt %-6s %-44s |d| %.3e  bound %.3e\n", format_name(fmt), "loss", std::abs(got - g.loss),
              loss_tol);
  EXPECT_NEAR(got, g.loss, loss_tol);

  // Gradients, unscaled. Per tensor the bound is `rows` times looser: a bias
  // or gain gradient is a sum over the rows of terms of mixed signs that
  // cancel to about sum|terms| / sqrt(rows), so its error relative to
  // itself is up to sqrt(rows) larger (rows in NMSE).
  auto raw = download(m.grads(), fmt, m.param_elements());
  for (float& v : raw) v /= scale;
  const auto ref_grads = g.flat(m, "grad.");
  const double grad_bound = bound_for(fmt, gradient_sqrt_k(g.cfg, g.rows), gradient_roundings(g.cfg));
  expect_close(fmt, "gradients (all)", real_params(m, raw), real_params(m, ref_grads), grad_bound);
  for (const auto& t : m.tensors())
    expect_close(fmt, "grad " + t.name, real_params(m, raw, &t), real_params(m, ref_grads, &t), g.rows * grad_bound);
}

TEST_P(GptGoldenTest, ThreeStepsOfAdamWWithClippingMatchPyTorch) {
  const Format fmt = GetParam();
  const GptGolden g = load();
  config::TrainConfig c;
  c.precision = fmt;
  c.batch = g.batch;  // the fixture's batch is the whole data set: one step per epoch
  c.epochs = uint32_t(g.meta("steps"));
  c.seed = 1;  // shuffles the windows of the one batch: the mean loss does not depend on their order
  c.scaler.histogram_interval = 0;
  c.scaler.mode = fmt == Format::F32 ? config::LossScaleMode::None : config::LossScaleMode::Static;
  c.scaler.initial_loss_scale = loss_scale(fmt);
  c.clip.max_norm = g.meta("clip");
  auto& o = c.optimizer;
  o.kind = config::OptimizerKind::AdamW;
  o.schedule = config::LrSchedule::Constant;
  o.lr = g.meta("lr");
  o.beta1 = g.meta("beta1");
  o.beta2 = g.meta("beta2");
  o.eps = g.meta("eps");
  o.weight_decay = g.meta("weight_decay");
  o.decay_vectors = false;  // nanoGPT's configure_optimizers
  data::HostData data{g.batch, g.cfg.block_size, std::vector<float>(g.idx.begin(), g.idx.end()), g.targets, {}};
  train::Trainer t(ctx(), c, models::gpt_graph(g.cfg), train::LossKind::SoftmaxXent, data);
  const auto w0f = g.flat(t.model(), "init.");
  t.model().write_master(w0f);
  std::vector<float> losses;
  std::vector<double> norms;
  t.on_step = [&](const train::StepMetrics& s) {
    EXPECT_FALSE(s.skipped);
    losses.push_back(s.loss);
    norms.push_back(s.grad_norm);
  };
  t.run();
  ASSERT_EQ(losses.size(), g.losses.size());

  const train::Model& m = t.model();
  const auto w0 = real_params(m, w0f), w3 = real_params(m, t.model().read_master());
  const auto ref3 = real_params(m, g.flat(m, "adamw.step3."));
  std::vector<double> delta(w0.size()), ref_delta(w0.size());
  for (size_t i = 0; i < w0.size(); ++i) {
    delta[i] = w3[i] - w0[i];
    ref_delta[i] = ref3[i] - w0[i];
  }
  // The gradient norm before clipping (fp32 sum of squares over every
  // gradient): as the gradients err, plus the fp32 sum.
  const double grad_bound = bound_for(fmt, gradient_sqrt_k(g.cfg, g.rows), gradient_roundings(g.cfg));
  const auto ref_norms = g.file.floats("adamw.grad_norms", g.path);
  for (size_t k = 0; k < norms.size(); ++k)
    EXPECT_NEAR(norms[k], ref_norms[k], (std::sqrt(grad_bound) + 1e-6) * ref_norms[k] * (k + 1)) << "step " << k;
  // Clipping scales every gradient by clip / norm, the same factor on both
  // sides up to the norm's error above, so the update bounds of
  // adamw_bounds.hpp hold with the clipped gradients (Adam is invariant to
  // a common scale except through eps, 1e-8 here against gradients ~1e-3).
  const double master_ulps = 6 * rms(w0) / rms(ref_delta), steps = double(g.losses.size()), lr = g.meta("lr");
  const auto grad0 = real_params(m, g.flat(m, "grad."));
  const double delta_bound =
      nmse_bound(Format::F32, master_ulps) + adamw_update_bound(grad0, grad_bound, lr, steps, ref_delta);
  expect_close(fmt, "adamw update w3 - w0", delta, ref_delta, delta_bound);
  const Resolved res = adamw_resolved(grad0, grad_bound, lr, steps, ref_delta);
  ASSERT_GT(res.index.size(), w0.size() / 50) << "too few resolved gradients to test the update";
  std::vector<double> resolved, ref_resolved;
  for (size_t i : res.index) {
    resolved.push_back(delta[i]);
    ref_resolved.push_back(ref_delta[i]);
  }
  expect_close(fmt, "adamw update, resolved gradients", resolved, ref_resolved,
               nmse_bound(Format::F32, master_ulps) + res.bound);

  // Losses: the first as the step-0 loss; later ones also move with the
  // weights' difference dw, to first order by at most |g| |dw|.
  const double logit_bound = bound_for(fmt, forward_sqrt_k(g.cfg), forward_roundings(g.cfg));
  const double tol0 = 2 * 4 * std::sqrt(logit_bound) * rms(to_double(g.logits)) + (4.0 + g.rows) * 0x1p-24 * g.loss;
  const double dw = std::sqrt(delta_bound) * rms(ref_delta) * std::sqrt(double(ref_delta.size()));
  const double gnorm = rms(grad0) * std::sqrt(double(grad0.size()));
  for (size_t k = 0; k < losses.size(); ++k) {
    const double tol = tol0 + (k ? gnorm * dw : 0.0);
    std::printf("[golden] gpt %-6s %-44s |d| %.3e  bound %.3e\n", format_name(fmt),
                ("loss before step " + std::to_string(k + 1)).c_str(), std::abs(losses[k] - g.losses[k]), tol);
    EXPECT_NEAR(losses[k], g.losses[k], tol) << "step " << k + 1;
  }
}

// Every storage format; the 16-bit ones round to nearest with fp32 sums, as
// bound_for models them.
INSTANTIATE_TEST_SUITE_P(Fixture, GptGoldenTest,
                         ::testing::Values(Format::F32, Format::F16, Format::BF16, Format::CB16),
                         [](const ::testing::TestParamInfo<Format>& i) { return std::string(format_name(i.param)); });

}  // namespace
}  // namespace vkamp::test
