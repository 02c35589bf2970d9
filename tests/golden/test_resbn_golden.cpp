// The BatchNorm golden test: tests/golden/make_fixtures.py wrote,
// with fp32 PyTorch, a small conv-BN-ReLU net with a residual add (ResBN:
// conv0 3->8 k3p1, bn0, ReLU; conv1 8->8, bn1, ReLU; conv2 8->8, bn2, + the
// block's input, ReLU; flatten; fc 512->10) on 16 8x8x3 images: its initial
// parameters, the logits, loss and every gradient of one training-mode
// step, BatchNorm's running statistics after that forward, the parameters
// and running statistics after 3 steps of SGD with momentum, and the logits
// of the trained model in eval mode (running statistics). vkamp builds the
// same graph and reproduces them on the GPU in fp32 and in fp16 with a
// static loss scale.
//
// Error bounds, as in test_golden.cpp (u32 = 2^-24, u16 = 2^-11;
// nmse_bound(fmt, n) allows an RMS relative error of about 2.3 n u):
//  - fp32: each sum of k terms on a value's path errs by about sqrt(k) u32
//    relative to its result (a random walk; the two sides sum in different
//    orders). A BatchNorm's statistics are sums over rows x h x w = 1024
//    values, and its normalisation passes relative errors on with a gain
//    of about 1 (it divides by the spread it measured): sqrt(1024) each.
//  - fp16: each value stored in fp16 on the path is one rounding stage of
//    at most u16 relative; the stages add.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "golden_step.hpp"
#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "support/test_paths.hpp"
#include "vkamp/graph/graph.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/train/gpu_state.hpp"
#include "vkamp/train/model.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

constexpr uint32_t kSide = 8, kInC = 3, kC = 8, kClasses = 10;
const char* const kNorms[] = {"bn0", "bn1", "bn2"};
const char* const kConvs[] = {"conv0", "conv1", "conv2"};

// make_fixtures.py's ResBN, with PyTorch's names. vkamp keeps images NHWC,
// conv weights out x (ky, kx, in) and the flatten in (h, w, c) order.
graph::Graph resbn_graph() {
  graph::Graph g;
  g.input("x", graph::Shape::picture(kSide, kSide, kInC));
  std::string h = "x";
  auto conv_bn = [&](const std::string& conv, const std::string& bn, const std::string& x, uint32_t in_c) {
    g.param(conv + ".weight", {kC, 3, 3, in_c});
    g.param(conv + ".bias", {kC}, graph::Init::Zero);
    g.conv2d(conv, x, conv + ".weight", conv + ".bias", 1, 1);
    return g.batch_norm(bn, conv);
  };
  const std::string stem = g.activation("relu0", conv_bn("conv0", "bn0", "x", kInC), ops::Activation::ReLU);
  const std::string y = g.activation("relu1", conv_bn("conv1", "bn1", stem, kC), ops::Activation::ReLU);
  const std::string sum = g.add("residual", conv_bn("conv2", "bn2", y, kC), stem);
  g.flatten("flat", g.activation("relu2", sum, ops::Activation::ReLU));
  g.param("fc.weight", {kClasses, kSide * kSide * kC});
  g.param("fc.bias", {kClasses}, graph::Init::Zero);
  g.linear("fc", "flat", "fc.weight", "fc.bias");
  g.set_output("fc");
  return g;
}

// A PyTorch tensor in vkamp's layout: conv weights [o, i, kh, kw] to
// [o, kh, kw, i], fc.weight's columns (c, h, w) to (h, w, c), the rest as is.
std::vector<float> to_vkamp(const std::string& name, std::vector<float> v) {
  const bool conv = name.find("conv") == 0 && name.find(".weight") != std::string::npos;
  if (conv) {
    const uint32_t in = uint32_t(v.size() / (kC * 9));
    std::vector<float> out(v.size());
    for (uint32_t o = 0; o < kC; ++o)
      for (uint32_t i = 0; i < in; ++i)
        for (uint32_t k = 0; k < 9; ++k) out[(o * 9 + k) * in + i] = v[(o * in + i) * 9 + k];
    return out;
  }
  if (name == "fc.weight") {
    std::vector<float> out(v.size());
    const uint32_t hw = kSide * kSide;
    for (uint32_t o = 0; o < kClasses; ++o)
      for (uint32_t c = 0; c < kC; ++c)
        for (uint32_t p = 0; p < hw; ++p) out[o * hw * kC + p * kC + c] = v[o * hw * kC + c * hw + p];
    return out;
  }
  return v;
}

struct Fixture {
  std::string path;
  io::TensorFile file;
  uint32_t rows = 0;
  std::vector<float> x;  // NHWC
  std::vector<uint32_t> labels;
  std::vector<float> logits, eval_logits, losses;
  double loss = 0;

  double meta(const std::string& key) const { return std::stod(file.metadata.at(key)); }

  // A tensor as floats; num_batches_tracked is PyTorch's I64.
  std::vector<float> values(const std::string& name) const {
    const io::Tensor* t = file.find(name);
    if (!t || t->dtype != io::DType::I64) return file.floats(name, path);
    std::vector<float> out(t->elements());
    for (size_t i = 0; i < out.size(); ++i) {
      int64_t v;
      std::memcpy(&v, t->data.data() + 8 * i, 8);
      out[i] = float(v);
    }
    return out;
  }

  // The tensors `prefix`<name> for every tensor of `tensors` (parameters or
  // buffers), in vkamp's padded flat layout.
  std::vector<float> flat(const std::vector<graph::ParamTensor>& tensors, size_t padded,
                          const std::string& prefix) const {
    std::vector<float> out(padded, 0.0f);
    for (const auto& t : tensors) {
      std::vector<float> v = to_vkamp(t.name, values(prefix + t.name));
      if (v.size() != t.size) throw std::runtime_error(path + ": " + prefix + t.name + " has the wrong size");
      std::copy(v.begin(), v.end(), out.begin() + t.offset);
    }
    return out;
  }
};

Fixture load() {
  Fixture f;
  f.path = VKAMP_TEST_DIR(VKAMP_GOLDEN_DIR) + "/resbn.safetensors";
  f.file = io::read_safetensors(f.path);
  const std::vector<float> nchw = f.file.floats("x", f.path);
  f.rows = uint32_t(nchw.size() / (kInC * kSide * kSide));
  f.x.resize(nchw.size());
  const uint32_t hw = kSide * kSide;
  for (uint32_t n = 0; n < f.rows; ++n)
    for (uint32_t c = 0; c < kInC; ++c)
      for (uint32_t p = 0; p < hw; ++p) f.x[(size_t(n) * hw + p) * kInC + c] = nchw[(size_t(n) * kInC + c) * hw + p];
  const io::Tensor* y = f.file.find("labels");
  if (!y || y->dtype != io::DType::I64 || y->elements() != f.rows) throw std::runtime_error(f.path + ": bad labels");
  for (uint32_t r = 0; r < f.rows; ++r) {
    int64_t v;
    std::memcpy(&v, y->data.data() + 8 * r, 8);
    f.labels.push_back(uint32_t(v));
  }
  f.logits = f.file.floats("logits", f.path);
  f.eval_logits = f.file.floats("eval.logits", f.path);
  f.loss = f.file.floats("loss", f.path).at(0);
  f.losses = f.file.floats("sgd.losses", f.path);
  return f;
}

// ---- Error budgets (see the top of the file) --------------------------------------

// The sums on a logit's path: the convolutions (k = 9 in_c), the three
// BatchNorms' statistics (rows x 64 values each) and fc (k = 512).
double forward_sqrt_k(uint32_t rows) {
  return std::sqrt(9.0 * kInC) + 2 * std::sqrt(9.0 * kC) + 3 * std::sqrt(rows * 64.0) + std::sqrt(64.0 * kC);
}
// The backward adds each convolution's dX (k = 9 out_c) and dW (rows x 64),
// each BatchNorm's column sums (rows x 64), fc's dX (k = 10) and dW (rows).
double gradient_sqrt_k(uint32_t rows) {
  return forward_sqrt_k(rows) + 3 * (std::sqrt(9.0 * kC) + std::sqrt(rows * 64.0)) + 3 * std::sqrt(rows * 64.0) +
         std::sqrt(double(kClasses)) + std::sqrt(double(rows));
}
// fp16 stages: the input; per conv and fc the working weights and the
// output (4 x 2); each BatchNorm's output (3); the residual sum (1); ReLU
// and flatten are exact. The backward: dlogits (1); per conv and fc dz, dX,
// dW (4 x 3); per BatchNorm dx, dweight, dbias (3 x 3); the residual's
// gradient summed into the stem's (1).
constexpr double kForwardRoundings = 1 + 8 + 3 + 1;
constexpr double kGradientRoundings = kForwardRoundings + 1 + 12 + 9 + 1;

double bound_for(Format fmt, double sqrt_k, double roundings) {
  double b = nmse_bound(Format::F32, sqrt_k);
  if (fmt != Format::F32) b += nmse_bound(fmt, roundings);
  return b;
}

float loss_scale(Format fmt) { return fmt == Format::F32 ? 1.0f : 1024.0f; }

// The real values (padding left out) of a flat vector, of one tensor or of
// all but `skip`.
template <class T>
std::vector<T> gather(const std::vector<graph::ParamTensor>& tensors, const std::vector<float>& flat,
                      const std::function<bool(const graph::ParamTensor&)>& keep) {
  std::vector<T> out;
  for (const auto& t : tensors)
    if (keep(t)) out.insert(out.end(), flat.begin() + t.offset, flat.begin() + t.offset + t.size);
  return out;
}
bool all(const graph::ParamTensor&) { return true; }

void expect_close(Format fmt, const std::string& what, const std::vector<float>& out, const std::vector<double>& ref,
                  double bound) {
  double e = 0, n = 0, worst = 0;
  for (size_t i = 0; i < out.size() && i < ref.size(); ++i) {
    e += (out[i] - ref[i]) * (out[i] - ref[i]);
    n += ref[i] * ref[i];
    worst = std::max(worst, std::abs(out[i] - ref[i]));
  }
  std::printf("[golden] %-8s %-8s %-40s nmse %.3e  max|d| %.3e  bound %.3e\n", "resbn", format_name(fmt),
              what.c_str(), n > 0 ? e / n : e, worst, bound);
  EXPECT_TRUE(close_to(out, ref, bound)) << what;
}

// A TrainState that applies its step: the commit of a test outside the Trainer.
Buffer applying_state() {
  train::TrainState st{};
  st.apply = 1;
  Buffer b(ctx(), sizeof st);
  b.write(&st, sizeof st);
  return b;
}

bool is_count(const graph::ParamTensor& t) { return t.name.find("num_batches_tracked") != std::string::npos; }
// A conv's bias feeds a BatchNorm, which subtracts its channel's mean: its
// gradient is 0 in exact arithmetic, rounding noise on both sides.
bool is_conv_bias(const graph::ParamTensor& t) { return t.name.find("conv") == 0 && t.name.find(".bias") != std::string::npos; }

class ResBnGolden : public GpuTestP<Format> {};

TEST_P(ResBnGolden, ForwardGradientsAndRunningStatisticsMatchPyTorch) {
  const Format fmt = GetParam();
  const Fixture f = load();
  train::Model m(ctx(), resbn_graph(), fmt, f.rows, /*seed=*/1, false, false);
  const auto& params = m.tensors();
  m.write_master(f.flat(params, m.param_elements(), "init."));
  const auto& bufs = m.buffer_tensors();
  const std::vector<float> buffers0 = m.read_buffers();
  // vkamp's initial buffers are PyTorch's (0, 1, 0).
  EXPECT_EQ(gather<float>(bufs, buffers0, all), gather<float>(bufs, f.flat(bufs, buffers0.size(), "init."), all));

  const float scale = loss_scale(fmt);
  Buffer x = upload(ctx(), fmt, f.x);
  Buffer y(ctx(), f.rows * 4);
  y.write(f.labels);
  const double got_loss = golden_forward_backward(m, fmt, x, y, f.rows, 1, kClasses, scale);
  Buffer state = applying_state();
  run_once([&](Sequence& seq) { m.record_commit(seq, state, f.rows); });

  const double logit_bound = bound_for(fmt, forward_sqrt_k(f.rows), kForwardRoundings);
  const std::vector<double> ref_logits = to_double(f.logits);
  expect_close(fmt, "logits", download(m.output(), fmt, size_t(f.rows) * kClasses), ref_logits, logit_bound);
  // The loss as test_golden.cpp bounds it: |dloss| <= 2 max|dz|, the
  // largest logit error taken as 4 times their RMS bound, plus the fp32
  // loss's own few u32 per row.
  const double loss_tol = 2 * 4 * std::sqrt(logit_bound) * rms(ref_logits) + (4.0 + f.rows) * 0x1p-24 * f.loss;
  std::printf("[golden] resbn    %-8s %-40s |d| %.3e  bound %.3e\n", format_name(fmt), "loss",
              std::abs(got_loss - f.loss), loss_tol);
  EXPECT_NEAR(got_loss, f.loss, loss_tol);

  // Gradients, divided by the loss scale: all together, then per tensor 16
  // times looser (a tensor may be a few sums over 16 rows of mixed signs,
  // as test_golden.cpp explains). The conv biases' gradients are 0 up to
  // rounding, so they are held to the whole gradient's allowed RMS error
  // in absolute terms.
  const std::vector<float> raw = download(m.grads(), fmt, m.param_elements());
  std::vector<float> grads(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) grads[i] = raw[i] / scale;
  const std::vector<float> ref_flat = f.flat(params, m.param_elements(), "grad.");
  const double grad_bound = bound_for(fmt, gradient_sqrt_k(f.rows), kGradientRoundings);
  const auto ref_all = gather<double>(params, ref_flat, all);
  expect_close(fmt, "gradients (all)", gather<float>(params, grads, all), ref_all, grad_bound);
  for (const auto& t : params) {
    auto only = [&](const graph::ParamTensor& u) { return &u == &t; };
    const auto got = gather<float>(params, grads, only);
    const auto ref = gather<double>(params, ref_flat, only);
    if (!is_conv_bias(t)) {
      expect_close(fmt, "grad " + t.name, got, ref, 16 * grad_bound);
      continue;
    }
    std::vector<double> d(got.size());
    for (size_t i = 0; i < d.size(); ++i) d[i] = got[i] - ref[i];
    std::printf("[golden] resbn    %-8s %-40s rms|d| %.3e  bound %.3e\n", format_name(fmt), ("grad " + t.name).c_str(),
                rms(d), 4 * std::sqrt(grad_bound) * rms(ref_all));
    EXPECT_LE(rms(d), 4 * std::sqrt(grad_bound) * rms(ref_all)) << "grad " << t.name;
  }

  // The running statistics after one training forward: 0.9 x the initial
  // value + 0.1 x the batch's mean or unbiased variance, whose errors are
  // the BatchNorm inputs' (at most the logits' path): the logits' bound.
  const std::vector<float> buffers1 = m.read_buffers();
  const std::vector<float> ref1 = f.flat(bufs, buffers1.size(), "forward.");
  auto stats = [](const graph::ParamTensor& t) { return !is_count(t); };
  expect_close(fmt, "running statistics after the forward", gather<float>(bufs, buffers1, stats),
               gather<double>(bufs, ref1, stats), logit_bound);
  EXPECT_EQ(gather<float>(bufs, buffers1, is_count), gather<float>(bufs, ref1, is_count));
}

TEST_P(ResBnGolden, ThreeStepsOfSgdAndEvalMatchPyTorch) {
  const Format fmt = GetParam();
  const Fixture f = load();
  config::TrainConfig c;
  c.precision = fmt;
  c.batch = f.rows;  // the fixture's batch is the whole data set: one step per epoch
  c.epochs = uint32_t(f.meta("steps"));
  c.seed = 1;  // shuffles the rows of the one batch: BatchNorm's statistics do not depend on their order
  c.scaler.histogram_interval = 0;
  c.scaler.mode = fmt == Format::F32 ? config::LossScaleMode::None : config::LossScaleMode::Static;
  c.scaler.initial_loss_scale = loss_scale(fmt);
  c.optimizer.kind = config::OptimizerKind::SGD;
  c.optimizer.schedule = config::LrSchedule::Constant;
  c.optimizer.lr = f.meta("sgd.lr");
  c.optimizer.momentum = f.meta("sgd.momentum");
  c.optimizer.weight_decay = 0;
  data::HostData data{f.rows, kSide * kSide * kInC, f.x, f.labels, {}};
  train::Trainer t(ctx(), c, resbn_graph(), train::LossKind::SoftmaxXent, data);
  train::Model& m = t.model();
  const auto& params = m.tensors();
  const std::vector<float> w0f = f.flat(params, m.param_elements(), "init.");
  m.write_master(w0f);
  std::vector<float> losses;
  t.on_step = [&](const train::StepMetrics& s) {
    EXPECT_FALSE(s.skipped);
    losses.push_back(s.loss);
  };
  t.run();
  ASSERT_EQ(losses.size(), f.losses.size());

  // The update w3 - w0 (the weights would hide it), as test_golden.cpp:
  // the gradients' bound, plus the fp32 master's rounding at each of the 3
  // steps on both sides, 6 u32 rms(w) / rms(update) ulps.
  const auto w0 = gather<double>(params, w0f, all), w3 = gather<double>(params, m.read_master(), all);
  const auto ref3 = gather<double>(params, f.flat(params, m.param_elements(), "sgd.step3."), all);
  std::vector<float> delta(w0.size());
  std::vector<double> ref_delta(w0.size());
  for (size_t i = 0; i < w0.size(); ++i) {
    delta[i] = float(w3[i] - w0[i]);
    ref_delta[i] = ref3[i] - w0[i];
  }
  const double grad_bound = bound_for(fmt, gradient_sqrt_k(f.rows), kGradientRoundings);
  const double delta_bound = grad_bound + nmse_bound(Format::F32, 6 * rms(w0) / rms(ref_delta));
  expect_close(fmt, "sgd update w3 - w0", delta, ref_delta, delta_bound);
  std::vector<float> w3f(w3.begin(), w3.end());
  const double w_bound = delta_bound * std::pow(rms(ref_delta) / rms(ref3), 2) + nmse_bound(Format::F32, 6);
  expect_close(fmt, "sgd weights after 3 steps", w3f, ref3, w_bound);

  // The running statistics after the 3 steps: each step's statistics err
  // as the forward does, and through the weights the steps moved (their
  // relative error sqrt(w_bound), with the gain of the 4 layers on the
  // path, 4^2 in NMSE).
  const auto& bufs = m.buffer_tensors();
  const std::vector<float> b3 = m.read_buffers();
  const std::vector<float> ref_b3 = f.flat(bufs, b3.size(), "sgd.step3.");
  auto stats = [](const graph::ParamTensor& t) { return !is_count(t); };
  const double logit_bound = bound_for(fmt, forward_sqrt_k(f.rows), kForwardRoundings);
  const double trained_bound = logit_bound + 16 * w_bound;
  expect_close(fmt, "running statistics after 3 steps", gather<float>(bufs, b3, stats),
               gather<double>(bufs, ref_b3, stats), trained_bound);
  EXPECT_EQ(gather<float>(bufs, b3, is_count), gather<float>(bufs, ref_b3, is_count));

  // The losses: the first is the step-0 loss; later ones besides differ by
  // the weights' difference, to first order |g . dw| <= |g| |dw|.
  const double loss_tol0 = 2 * 4 * std::sqrt(logit_bound) * rms(to_double(f.logits)) + (4.0 + f.rows) * 0x1p-24 * f.loss;
  const auto g0 = gather<double>(params, f.flat(params, m.param_elements(), "grad."), all);
  const double dw = std::sqrt(delta_bound) * rms(ref_delta) * std::sqrt(double(ref_delta.size()));
  const double gnorm = rms(g0) * std::sqrt(double(g0.size()));
  for (size_t k = 0; k < losses.size(); ++k) {
    const double tol = loss_tol0 + (k ? gnorm * dw : 0.0);
    std::printf("[golden] resbn    %-8s %-40s |d| %.3e  bound %.3e\n", format_name(fmt),
                ("sgd loss before step " + std::to_string(k + 1)).c_str(), std::abs(losses[k] - f.losses[k]), tol);
    EXPECT_NEAR(losses[k], f.losses[k], tol) << "step " << k + 1;
  }

  // Eval mode: the trained model normalises with its running statistics.
  // Its logits err as the forward and through the weights and statistics,
  // as the running statistics above.
  Buffer x = upload(ctx(), fmt, f.x);
  m.output().fill(kPoison);
  run_once([&](Sequence& seq) { m.record_forward(seq, x, f.rows, graph::ForwardMode::Eval); });
  expect_close(fmt, "eval logits after 3 steps", download(m.output(), fmt, size_t(f.rows) * kClasses),
               to_double(f.eval_logits), trained_bound);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ResBnGolden, ::testing::Values(Format::F32, Format::F16),
                         [](const ::testing::TestParamInfo<Format>& i) { return std::string(format_name(i.param)); });

}  // namespace
}  // namespace vkamp::test
