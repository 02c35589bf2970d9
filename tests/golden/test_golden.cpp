// Golden tests against PyTorch (llm.c's test_gpt2): fixtures written once by
// tests/golden/make_fixtures.py with fp32 PyTorch (initial weights, a batch,
// logits, loss, every gradient, and the weights and losses of 3 steps of SGD
// with momentum and of AdamW), read here through vkamp's safetensors reader
// and PyTorch-layout import, and reproduced on the GPU in fp32 and in fp16
// with a static loss scale.
//
// Error bounds. The reference is itself fp32, so every bound covers both
// sides' rounding. Notation: u32 = 2^-24, u16 = 2^-11 (unit roundoffs);
// nmse_bound(fmt, n) allows an RMS relative error of about 2.3 n u (the 16/3
// margin over one rounding's u^2/3, numerics.cpp).
//  - fp32 accumulation: a k-term sum whose terms have mixed signs errs by
//    about sqrt(k) u32 relative to the result (a random walk; k u32 is the
//    worst case, not reached by random data). The two sides sum in different
//    orders, so their errors do not cancel. Per GEMM on a quantity's path
//    we allow sqrt(k) ulps and add them up over the path (errors of earlier
//    layers pass on with a gain of about 1 in these ReLU nets).
//  - fp16: every value stored in fp16 (the input, the working weights, each
//    layer's output, each gradient) is rounded once, RMS u16/sqrt(3)
//    relative; a sum of k such rounded products averages those errors, so
//    each rounding stage on the path costs about one u16, and stages add.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "support/test_paths.hpp"
#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "adamw_bounds.hpp"
#include "golden_step.hpp"
#include "support/reference.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/ops/losses.hpp"
#include "vkamp/train/model.hpp"
#include "vkamp/io/torch_layout.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

using models::LayerKind;

// ---- The fixture -------------------------------------------------------------

struct Golden {
  std::string path;
  io::TensorFile file;
  models::ModelSpec spec;
  uint32_t rows = 0, features = 0, classes = 0;
  std::vector<float> x;            // rows x features (NCHW with C = 1 is vkamp's NHWC)
  std::vector<uint32_t> labels;
  std::vector<float> init, grad, sgd3, adamw3;  // vkamp's padded flat layout
  std::vector<float> logits, sgd_losses, adamw_losses;
  double loss = 0;

  double meta(const std::string& key) const { return std::stod(file.metadata.at(key)); }
};

// The tensors `prefix`<p>, renamed <p>: exactly the model's parameters, as
// import_torch_tensors requires.
io::TensorFile strip(const io::TensorFile& f, const std::string& prefix) {
  io::TensorFile out;
  for (const auto& t : f.tensors)
    if (t.name.rfind(prefix, 0) == 0) {
      io::Tensor c = t;
      c.name = t.name.substr(prefix.size());
      out.tensors.push_back(std::move(c));
    }
  return out;
}

Golden load(const std::string& name) {
  Golden g;
  g.path = VKAMP_TEST_DIR(VKAMP_GOLDEN_DIR) + "/" + name;
  g.file = io::read_safetensors(g.path);
  g.spec = models::parse_model(g.file.metadata.at("vkamp.model"));
  g.classes = models::layer_shapes(g.spec).back().elements();
  const io::Tensor* x = g.file.find("x");
  if (!x || x->shape.empty()) throw std::runtime_error(g.path + ": no x");
  g.rows = uint32_t(x->shape[0]);
  g.features = uint32_t(x->elements() / g.rows);
  g.x = g.file.floats("x", g.path);
  const io::Tensor* y = g.file.find("labels");
  if (!y || y->dtype != io::DType::I64 || y->elements() != g.rows) throw std::runtime_error(g.path + ": bad labels");
  for (uint32_t r = 0; r < g.rows; ++r) {
    int64_t v;
    std::memcpy(&v, y->data.data() + 8 * r, 8);
    g.labels.push_back(uint32_t(v));
  }
  g.init = io::import_torch_tensors(g.spec, strip(g.file, "init."), g.path);
  g.grad = io::import_torch_tensors(g.spec, strip(g.file, "grad."), g.path);
  g.sgd3 = io::import_torch_tensors(g.spec, strip(g.file, "sgd.step3."), g.path);
  g.adamw3 = io::import_torch_tensors(g.spec, strip(g.file, "adamw.step3."), g.path);
  g.logits = g.file.floats("logits", g.path);
  g.loss = g.file.floats("loss", g.path).at(0);
  g.sgd_losses = g.file.floats("sgd.losses", g.path);
  g.adamw_losses = g.file.floats("adamw.losses", g.path);
  return g;
}

// ---- Error budgets from the model's shape -------------------------------------

// Sum of sqrt(k) over the GEMMs of the forward (k = fan-in of each Linear
// and Conv2d): the fp32 accumulation error of the logits, in u32.
double forward_sqrt_k(const models::ModelSpec& spec) {
  auto shapes = models::layer_shapes(spec);
  double s = 0;
  for (size_t l = 0; l < spec.layers.size(); ++l) {
    const auto& L = spec.layers[l];
    if (L.kind == LayerKind::Linear) s += std::sqrt(double(shapes[l].elements()));
    if (L.kind == LayerKind::Conv2d) s += std::sqrt(double(L.kernel) * L.kernel * shapes[l].c);
  }
  return s;
}

// The same over forward and backward: each layer's dX (k = outputs; a conv's
// col2im then adds up to kernel^2 overlapping columns) and dW (k = rows, or
// rows x output pixels for a conv). Every gradient passes through at most
// all of them.
double gradient_sqrt_k(const models::ModelSpec& spec, uint32_t rows) {
  auto shapes = models::layer_shapes(spec);
  double s = forward_sqrt_k(spec);
  for (size_t l = 0; l < spec.layers.size(); ++l) {
    const auto& L = spec.layers[l];
    const auto& out = shapes[l + 1];
    if (L.kind == LayerKind::Linear) s += std::sqrt(double(out.c)) + std::sqrt(double(rows));
    if (L.kind == LayerKind::Conv2d)
      s += std::sqrt(double(L.kernel) * L.kernel * out.c) + std::sqrt(double(rows) * out.h * out.w);
  }
  return s;
}

uint32_t param_layers(const models::ModelSpec& spec) {
  uint32_t n = 0;
  for (const auto& L : spec.layers) n += L.has_params();
  return n;
}

// fp16 rounding stages (in u16): the forward rounds the input once and, per
// Linear/Conv2d, its working weights and its output (ReLU and max pooling
// pick stored values: exact). The backward adds, per layer, the rounded
// output gradient dz, the rounded dX and the rounded dW, and the loss's
// rounded dlogits.
double forward_roundings(const models::ModelSpec& spec) { return 1 + 2.0 * param_layers(spec); }
double gradient_roundings(const models::ModelSpec& spec) { return forward_roundings(spec) + 1 + 3.0 * param_layers(spec); }

double bound_for(Format fmt, double sqrt_k, double roundings) {
  double b = nmse_bound(Format::F32, sqrt_k);
  if (fmt != Format::F32) b += nmse_bound(fmt, roundings);
  return b;
}

// ---- Measuring ---------------------------------------------------------------------

struct Diff {
  double nmse = 0, max_abs = 0;
};

Diff diff(const std::vector<float>& out, const std::vector<double>& ref) {
  double e = 0, n = 0;
  Diff d;
  for (size_t i = 0; i < out.size(); ++i) {
    double a = double(out[i]) - ref[i];
    e += a * a;
    n += ref[i] * ref[i];
    d.max_abs = std::max(d.max_abs, std::abs(a));
  }
  d.nmse = n > 0 ? e / n : e;
  return d;
}

// The measured differences go to stdout (bench/NOTES.md keeps them).
void print(const Golden& g, Format fmt, const std::string& what, const Diff& d, double bound) {
  std::printf("[golden] %-28s %-8s %-34s nmse %.3e  max|d| %.3e  bound %.3e\n",
              g.file.metadata.at("vkamp.model").substr(0, 28).c_str(), format_name(fmt), what.c_str(), d.nmse,
              d.max_abs, bound);
}

void expect_close(const Golden& g, Format fmt, const std::string& what, const std::vector<float>& out,
                  const std::vector<double>& ref, double bound) {
  print(g, fmt, what, diff(out, ref), bound);
  EXPECT_TRUE(close_to(out, ref, bound)) << g.path << ": " << what;
}

// The real parameters (padding left out) of a flat vector, one tensor or all.
std::vector<float> gather(const train::Model& m, const std::vector<float>& flat, const graph::ParamTensor* only = nullptr) {
  std::vector<float> out;
  for (const auto& t : m.tensors())
    if (!only || only == &t) out.insert(out.end(), flat.begin() + t.offset, flat.begin() + t.offset + t.size);
  return out;
}

std::vector<double> gather_d(const train::Model& m, const std::vector<float>& flat, const graph::ParamTensor* only = nullptr) {
  return to_double(gather(m, flat, only));
}

// ---- Tests ----------------------------------------------------------------------

struct Case {
  const char* fixture;
  Format fmt;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.fixture << " " << format_name(c.fmt); }

std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  std::string f = i.param.fixture;
  return f.substr(0, f.find('.')) + "_" + format_name(i.param.fmt);
}

// fp16 runs with a static loss scale, as training does: the 16-bit
// gradients hold scale x gradient and are divided by it when read.
float loss_scale(Format fmt) { return fmt == Format::F32 ? 1.0f : 1024.0f; }

class GoldenTest : public GpuTestP<Case> {};

TEST_P(GoldenTest, ForwardLossAndGradientsMatchPyTorch) {
  const Case c = GetParam();
  const Golden g = load(c.fixture);
  train::Model m(ctx(), g.spec, c.fmt, g.rows, /*seed=*/1, false, false);
  ASSERT_EQ(m.param_elements(), g.init.size());
  ASSERT_EQ(g.features, g.spec.inputs());
  m.write_master(g.init);

  const float scale = loss_scale(c.fmt);
  Buffer x = upload(ctx(), c.fmt, g.x);
  Buffer y(ctx(), g.rows * 4);
  y.write(g.labels);
  const double got_loss = golden_forward_backward(m, c.fmt, x, y, g.rows, 1, g.classes, scale);

  // Logits: the forward's accumulation (fp32) and rounding stages (fp16).
  const double logit_bound = bound_for(c.fmt, forward_sqrt_k(g.spec), forward_roundings(g.spec));
  auto logits = download(m.output(), c.fmt, size_t(g.rows) * g.classes);
  auto ref_logits = to_double(g.logits);
  expect_close(g, c.fmt, "logits", logits, ref_logits, logit_bound);

  // Loss: d loss / d z = (softmax - onehot) / rows has an L1 norm of at most
  // 2 per row, so |dloss| <= 2 max|dz|; the largest of the logits' errors is
  // taken as 4 times their RMS bound. The fp32 loss itself (exp, log and a
  // mean over the rows) adds a few u32 per row relative to the loss.
  const double z_err = 4 * std::sqrt(logit_bound) * rms(ref_logits);
  const double loss_tol = 2 * z_err + (4.0 + g.rows) * 0x1p-24 * std::abs(g.loss);
  std::printf("[golden] %-28s %-8s %-34s |d| %.3e  bound %.3e\n", g.file.metadata.at("vkamp.model").substr(0, 28).c_str(),
              format_name(c.fmt), "loss", std::abs(got_loss - g.loss), loss_tol);
  EXPECT_NEAR(got_loss, g.loss, loss_tol) << g.path;

  // Gradients, divided by the loss scale. Over all parameters: every GEMM
  // and rounding stage of forward and backward. One tensor alone may be a
  // few bias gradients, sums over 16 rows of mixed signs that cancel to about
  // sum|terms| / sqrt(16): its error relative to itself can be sqrt(16) = 4
  // times larger, so per tensor the bound is 16 times looser.
  // In fp16 the largest error is not a rounding chain but ReLU inputs that
  // lie within fp16 rounding of 0 and switch sides: each sends one row's
  // whole dz the other way (measured: fc1 of the MLP at NMSE 1.5e-4, the
  // layers after it at 3e-7). The rounding-stage count covers that with a
  // factor of about 4 (MLP) and 20 (LeNet-5) to spare; it is not derived.
  auto raw = download(m.grads(), c.fmt, m.param_elements());
  std::vector<float> grads(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) grads[i] = raw[i] / scale;
  const double grad_bound = bound_for(c.fmt, gradient_sqrt_k(g.spec, g.rows), gradient_roundings(g.spec));
  expect_close(g, c.fmt, "gradients (all)", gather(m, grads), gather_d(m, g.grad), grad_bound);
  for (const auto& t : m.tensors())
    expect_close(g, c.fmt, "grad " + t.name, gather(m, grads, &t), gather_d(m, g.grad, &t), 16 * grad_bound);
}

// Three optimizer steps with the Trainer on the fixture's batch (one step
// per epoch: the data is one batch), from the fixture's initial weights.
struct Run {
  std::vector<float> losses, master;
  std::vector<bool> skipped;
};

Run train_steps(const Golden& g, Format fmt, config::OptimizerKind kind) {
  config::TrainConfig c;
  c.precision = fmt;
  c.batch = g.rows;
  c.epochs = uint32_t(g.meta("steps"));
  c.seed = 1;  // shuffles the rows of the one batch: the mean loss and gradient do not depend on their order
  c.scaler.histogram_interval = 0;
  c.scaler.mode = fmt == Format::F32 ? config::LossScaleMode::None : config::LossScaleMode::Static;
  c.scaler.initial_loss_scale = loss_scale(fmt);
  auto& o = c.optimizer;
  o.kind = kind;
  o.schedule = config::LrSchedule::Constant;
  if (kind == config::OptimizerKind::SGD) {
    o.lr = g.meta("sgd.lr");
    o.momentum = g.meta("sgd.momentum");
    o.weight_decay = 0;
  } else {
    o.lr = g.meta("adamw.lr");
    o.beta1 = g.meta("adamw.beta1");
    o.beta2 = g.meta("adamw.beta2");
    o.eps = g.meta("adamw.eps");
    o.weight_decay = g.meta("adamw.weight_decay");
  }
  data::HostData data{g.rows, g.features, g.x, g.labels, {}};
  train::Trainer t(ctx(), c, g.spec, train::LossKind::SoftmaxXent, data);
  t.model().write_master(g.init);
  Run r;
  t.on_step = [&](const train::StepMetrics& m) {
    r.losses.push_back(m.loss);
    r.skipped.push_back(m.skipped);
  };
  t.run();
  r.master = t.model().read_master();
  return r;
}

void check_steps(const Case& c, config::OptimizerKind kind) {
  const Golden g = load(c.fixture);
  const bool sgd = kind == config::OptimizerKind::SGD;
  const std::string opt = sgd ? "sgd" : "adamw";
  const auto& ref_w = sgd ? g.sgd3 : g.adamw3;
  const auto& ref_losses = sgd ? g.sgd_losses : g.adamw_losses;
  Run r = train_steps(g, c.fmt, kind);
  ASSERT_EQ(r.losses.size(), ref_losses.size());
  for (bool s : r.skipped) ASSERT_FALSE(s) << "a step was skipped";

  // A model only to name the tensors of the layout.
  train::Model m(ctx(), g.spec, Format::F32, 1, 1, false, false);
  const auto w0 = gather_d(m, g.init);
  const auto w3 = gather(m, r.master);
  const auto ref3 = gather_d(m, ref_w);
  // The update w3 - w0, compared as such: the weights themselves would hide
  // it (w0 is the same on both sides and far larger).
  std::vector<float> delta(w3.size());
  std::vector<double> ref_delta(w3.size());
  for (size_t i = 0; i < w3.size(); ++i) {
    delta[i] = float(double(w3[i]) - w0[i]);
    ref_delta[i] = ref3[i] - w0[i];
  }

  // SGD: the update is lr times a sum of gradients, so it errs as the
  // gradients do; besides, each of the 3 steps rounds the fp32 master
  // (u32 |w|, on both sides): 6 u32 rms(w) / rms(update) more ulps.
  const double grad_bound = bound_for(c.fmt, gradient_sqrt_k(g.spec, g.rows), gradient_roundings(g.spec));
  const double master_ulps = 6 * rms(w0) / rms(ref_delta);
  double delta_bound = grad_bound + nmse_bound(Format::F32, master_ulps);
  const double steps = ref_losses.size();
  if (!sgd)  // adamw_bounds.hpp
    delta_bound = nmse_bound(Format::F32, master_ulps) +
                  adamw_update_bound(gather_d(m, g.grad), grad_bound, g.meta("adamw.lr"), steps, ref_delta);
  expect_close(g, c.fmt, opt + " update w3 - w0", delta, ref_delta, delta_bound);
  if (!sgd) {  // the well-resolved gradients' updates, tightly (adamw_bounds.hpp)
    const Resolved res = adamw_resolved(gather_d(m, g.grad), grad_bound, g.meta("adamw.lr"), steps, ref_delta);
    ASSERT_GT(res.index.size(), ref_delta.size() / 50) << "too few resolved gradients to test the update";
    std::vector<float> resolved;
    std::vector<double> ref_resolved;
    for (size_t i : res.index) {
      resolved.push_back(delta[i]);
      ref_resolved.push_back(ref_delta[i]);
    }
    expect_close(g, c.fmt, opt + " update, resolved gradients", resolved, ref_resolved,
                 nmse_bound(Format::F32, master_ulps) + res.bound);
  }
  // The weights themselves: the update's error relative to the weights.
  double w_bound = delta_bound * std::pow(rms(ref_delta) / rms(ref3), 2) + nmse_bound(Format::F32, 6);
  expect_close(g, c.fmt, opt + " weights after 3 steps", w3, ref3, w_bound);

  // The losses: the first is the step-0 loss; later ones differ besides by
  // the weights' difference dw, to first order |g . dw| <= |g| |dw| (Cauchy-
  // Schwarz), with |dw| at most the update's error bound.
  const double logit_bound = bound_for(c.fmt, forward_sqrt_k(g.spec), forward_roundings(g.spec));
  const double loss_tol0 = 2 * 4 * std::sqrt(logit_bound) * rms(to_double(g.logits)) +
                           (4.0 + g.rows) * 0x1p-24 * std::abs(g.loss);
  const auto g0 = gather_d(m, g.grad);
  const double dw = std::sqrt(delta_bound) * rms(ref_delta) * std::sqrt(double(ref_delta.size()));
  const double gnorm = rms(g0) * std::sqrt(double(g0.size()));
  for (size_t k = 0; k < ref_losses.size(); ++k) {
    const double tol = loss_tol0 + (k ? gnorm * dw : 0.0);
    std::printf("[golden] %-28s %-8s %-34s |d| %.3e  bound %.3e\n", g.file.metadata.at("vkamp.model").substr(0, 28).c_str(),
                format_name(c.fmt), (opt + " loss before step " + std::to_string(k + 1)).c_str(),
                std::abs(r.losses[k] - ref_losses[k]), tol);
    EXPECT_NEAR(r.losses[k], ref_losses[k], tol) << opt << " step " << k + 1;
  }
}

TEST_P(GoldenTest, ThreeStepsOfSgdMomentumMatchPyTorch) { check_steps(GetParam(), config::OptimizerKind::SGD); }
TEST_P(GoldenTest, ThreeStepsOfAdamWMatchPyTorch) { check_steps(GetParam(), config::OptimizerKind::AdamW); }

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenTest,
                         ::testing::Values(Case{"mlp.safetensors", Format::F32}, Case{"mlp.safetensors", Format::F16},
                                           Case{"lenet5.safetensors", Format::F32},
                                           Case{"lenet5.safetensors", Format::F16}),
                         case_name);

}  // namespace
}  // namespace vkamp::test
