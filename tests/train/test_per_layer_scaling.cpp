// Per-layer loss scaling (--loss-scale per-layer): every layer
// of a chain carries its own scale through the backward pass, and the
// optimizer unscales each parameter by its own layer's scale.
//
// The gradients are read straight from the model's 16-bit gradient buffer
// after a step, divided by the scale each tensor carried, and compared with
// the CPU gradient in double (tiny_model.hpp) of the same fp16 weights.
#include <cmath>
#include <filesystem>
#include <random>

#include "support/gpu_test.hpp"
#include "tiny_model.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/graph/scale_groups.hpp"
#include "vkamp/train/layer_scales.hpp"
#include "vkamp/train/trainer.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::test {
namespace {

using config::LossScaleMode;
using config::TrainConfig;

constexpr uint32_t kRows = 32, kFeatures = 6, kClasses = 4, kDepth = 16;
constexpr double kFp16Max = 65504.0;

// 16 Linear layers, 15 of them tanh, 6 wide: deep and narrow.
std::string deep_model() {
  std::string s = std::to_string(kFeatures);
  for (uint32_t l = 0; l + 1 < kDepth; ++l) s += "-6t";
  return s + "-" + std::to_string(kClasses);
}

TrainConfig config_for(LossScaleMode mode, double scale) {
  TrainConfig c;
  c.precision = Format::F16;
  c.batch = kRows;
  c.epochs = 1;
  c.seed = 3;
  c.optimizer.kind = config::OptimizerKind::SGD;
  c.optimizer.momentum = 0;
  c.optimizer.lr = 0;  // the weights stay put: every step sees the same gradient
  c.scaler.mode = mode;
  c.scaler.initial_loss_scale = scale;
  c.scaler.histogram_interval = 0;
  return c;
}

// Weights whose gradients shrink about 10x a layer going back (small
// weights), with biases that keep the activations near 0.5 so the forward
// pass stays well inside fp16. fp16 values, so the masters are exactly the
// working copy the GPU computes with.
std::vector<float> small_weights(const std::vector<graph::ParamTensor>& tensors, uint32_t total) {
  std::vector<float> w(total, 0.0f);
  std::mt19937 rng(11);
  std::normal_distribution<float> weight(0.0f, 0.06f), bias(0.0f, 0.6f);
  for (size_t t = 0; t < tensors.size(); ++t)
    for (uint32_t i = 0; i < tensors[t].size; ++i)
      w[tensors[t].offset + i] = round_to(Format::F16, tensors[t].matrix ? weight(rng) : bias(rng));
  return w;
}

struct StepGradient {
  std::vector<double> g;              // unscaled, per parameter element
  std::vector<train::LayerScaleReading> layers;
  std::vector<train::StepMetrics> steps;
};

// Runs `steps` steps from `w` and returns the last step's gradient, each
// tensor divided by the scale it carried (the global one, or its layer's).
StepGradient last_gradient(TrainConfig c, const data::HostData& data, const std::vector<float>& w, uint32_t steps,
                           const std::string& model = deep_model()) {
  c.epochs = steps;
  train::Trainer t(ctx(), c, models::parse_model(model), train::LossKind::SoftmaxXent, data);
  t.model().write_master(w);
  StepGradient out;
  t.on_step = [&](const train::StepMetrics& m) { out.steps.push_back(m); };
  t.run();
  out.layers = t.read_layer_scales();
  const float global = t.read_state().scale;  // static: the one scale
  const auto& tensors = t.model().tensors();
  std::vector<uint8_t> bytes(t.model().grads().bytes());
  t.model().grads().read(bytes.data(), bytes.size());
  const std::vector<float> g16 = unpack(Format::F16, bytes);
  out.g.assign(g16.size(), 0.0);
  for (size_t k = 0; k < tensors.size(); ++k) {
    const double s = out.layers.empty() ? global : out.layers[k / 2].last_scale;  // 2 tensors per layer
    for (uint32_t i = 0; i < tensors[k].size; ++i) out.g[tensors[k].offset + i] = g16[tensors[k].offset + i] / s;
  }
  return out;
}

// ||a - b|| / ||b|| over one tensor.
double relative_error(const std::vector<double>& a, const std::vector<double>& b, const graph::ParamTensor& t) {
  double e = 0, n = 0;
  for (uint32_t i = t.offset; i < t.offset + t.size; ++i) {
    e += (a[i] - b[i]) * (a[i] - b[i]);
    n += b[i] * b[i];
  }
  return std::sqrt(e / n);
}

double amax(const std::vector<double>& g, const graph::ParamTensor& t) {
  double m = 0;
  for (uint32_t i = t.offset; i < t.offset + t.size; ++i) m = std::max(m, std::abs(g[i]));
  return m;
}

// The largest power of two that keeps `a` two doublings below fp16's max.
double scale_for(double a) { return std::exp2(std::floor(std::log2(kFp16Max / (4 * a)))); }

class PerLayerScaling : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    data = one_batch_classification(kRows, kFeatures, kClasses, 5);
    train::Model probe(ctx(), spec, Format::F16, 1, 1, false, false);
    tensors = probe.tensors();
    w = small_weights(tensors, probe.param_elements());
    std::vector<double> wd(w.begin(), w.end());
    mlp_xent_grad(spec, tensors, wd, data, ref);
  }

  models::ModelSpec spec = models::parse_model(deep_model());
  data::HostData data;
  std::vector<graph::ParamTensor> tensors;
  std::vector<float> w;
  std::vector<double> ref;  // the gradient in double, from the same fp16 weights
};

// Error bound, normwise per tensor: along the path from the loss to layer
// l's gradient every layer rounds at most four times to fp16, each a
// relative error of at most u = 2^-11 (the forward output, the backward's
// dZ = dY f'(z), the GEMM's dX, the weight gradient itself); tanh is
// 1-Lipschitz and the small weights shrink earlier errors, so the errors
// add up to at most 4 L u (the power-of-two rescales are exact in the
// normal range). One global scale cannot meet it: with a scale that the
// last layer's gradient allows, the first layers' gradients (10^-14 of it)
// flush to zero in fp16, an error of 100%.
TEST_F(PerLayerScaling, DeepNarrowNetworkRecoversTheGradientsOneScaleFlushes) {
  const double u = 0x1p-11, bound = 4.0 * kDepth * u;
  double top = 0;
  std::vector<double> fixed;
  for (uint32_t l = 0; l < kDepth; ++l) {
    const double a = std::max(amax(ref, tensors[2 * l]), amax(ref, tensors[2 * l + 1]));
    top = std::max(top, a);
    fixed.push_back(scale_for(a));
  }
  // The premise: one scale that the largest gradient allows leaves the
  // first layer's gradient below fp16's smallest subnormal (2^-24).
  const double global = scale_for(top);
  ASSERT_LT(amax(ref, tensors[0]) * global, 0x1p-25) << "the network is not deep enough to underflow";

  StepGradient one = last_gradient(config_for(LossScaleMode::Static, global), data, w, 1);
  TrainConfig pl = config_for(LossScaleMode::PerLayer, 1);
  pl.scaler.fixed_layer_scales = fixed;
  StepGradient per = last_gradient(pl, data, w, 1);
  ASSERT_EQ(per.layers.size(), kDepth);
  for (uint32_t l = 0; l < kDepth; ++l) EXPECT_EQ(per.layers[l].last_scale, float(fixed[l])) << "layer " << l;

  for (uint32_t k = 0; k < tensors.size(); ++k) {
    EXPECT_LE(relative_error(per.g, ref, tensors[k]), bound) << tensors[k].name << " under per-layer scaling";
  }
  EXPECT_GT(relative_error(one.g, ref, tensors[0]), 0.5) << "one global scale kept layer 0's gradient";
  RecordProperty("layer0_error_global", std::to_string(relative_error(one.g, ref, tensors[0])));
  RecordProperty("layer0_error_per_layer", std::to_string(relative_error(per.g, ref, tensors[0])));

  // Adaptive: from one starting scale, every layer finds its own from its
  // amax history within a few steps, and the gradient meets the same bound.
  StepGradient adaptive = last_gradient(config_for(LossScaleMode::PerLayer, 1024), data, w, 24);
  for (uint32_t k = 0; k < tensors.size(); ++k)
    EXPECT_LE(relative_error(adaptive.g, ref, tensors[k]), bound) << tensors[k].name << " under adaptive scaling";
  // The history rule: the largest power of two that keeps the window's
  // amax kLayerMarginDoublings below fp16's max.
  for (uint32_t l = 0; l < kDepth; ++l) {
    const auto& r = adaptive.layers[l];
    const double margin = train::kLayerMarginDoublings;
    EXPECT_EQ(r.scale, float(std::exp2(std::floor(std::log2(float(kFp16Max) / r.amax)) - margin))) << "layer " << l;
    EXPECT_EQ(r.overflows, 0u) << "layer " << l;
  }
}

// Golden: where no gradient leaves fp16's normal range, multiplying by a
// power of two commutes with every rounding, so per-layer scales whose
// ratios are powers of two give bit for bit the global scale's unscaled
// gradients, and the same weights after several updates.
TEST_F(PerLayerScaling, PowerOfTwoScalesReproduceTheGlobalScaleExactly) {
  const std::string shallow = "6-8t-8t-4";
  auto spec3 = models::parse_model(shallow);
  train::Model probe(ctx(), spec3, Format::F16, 1, 1, false, false);
  std::vector<float> w3(probe.param_elements(), 0.0f);
  std::mt19937 rng(2);
  std::normal_distribution<float> n(0.0f, 0.5f);
  for (const auto& t : probe.tensors())
    for (uint32_t i = 0; i < t.size; ++i) w3[t.offset + i] = round_to(Format::F16, n(rng));

  TrainConfig g = config_for(LossScaleMode::Static, 1024);
  g.optimizer.lr = 0.125;
  TrainConfig pl = config_for(LossScaleMode::PerLayer, 1);
  pl.optimizer.lr = 0.125;
  pl.scaler.fixed_layer_scales = {4096, 256, 1024};  // the output layer shares the global scale: same loss gradient
  StepGradient a = last_gradient(g, data, w3, 5, shallow);
  StepGradient b = last_gradient(pl, data, w3, 5, shallow);
  ASSERT_EQ(a.steps.size(), 5u);
  ASSERT_EQ(b.steps.size(), 5u);
  for (size_t s = 0; s < 5; ++s) EXPECT_EQ(a.steps[s].loss, b.steps[s].loss) << "step " << s;
  // Elements whose scaled value is subnormal at the smaller scale may differ.
  size_t compared = 0;
  for (const auto& t : probe.tensors())
    for (uint32_t i = t.offset; i < t.offset + t.size; ++i) {
      if (std::abs(a.g[i]) * 256 < 0x1p-14) continue;
      ++compared;
      EXPECT_EQ(a.g[i], b.g[i]) << t.name << " element " << i - t.offset;
    }
  EXPECT_GT(compared, probe.param_count() * 9 / 10);
}

// Writing an inf into the first layer's gradient (--inject-overflow) backs
// off that layer's scale alone; the step is skipped as with one scale.
TEST_F(PerLayerScaling, AnOverflowInOneLayerBacksOffThatLayerAlone) {
  TrainConfig c = config_for(LossScaleMode::PerLayer, 1024);
  StepGradient clean = last_gradient(c, data, w, 20);
  c.inject_overflow = config::parse_step_ranges("19");
  StepGradient hit = last_gradient(c, data, w, 20);  // 21 attempts: step 19 is skipped
  ASSERT_EQ(hit.steps.size(), 21u);
  EXPECT_EQ(hit.steps[19].skipped, 1u);
  EXPECT_EQ(hit.layers[0].overflows, 1u);
  // Its amax entry is fp16's max over the scale it carried: the next scale
  // is kLayerMarginDoublings below that entry (below backoff_factor's half).
  EXPECT_EQ(hit.layers[0].scale, clean.layers[0].scale / std::exp2(train::kLayerMarginDoublings));
  for (uint32_t l = 1; l < kDepth; ++l) {
    EXPECT_EQ(hit.layers[l].overflows, 0u) << "layer " << l;
    EXPECT_EQ(hit.layers[l].scale, clean.layers[l].scale) << "layer " << l;
  }
}

TEST_F(PerLayerScaling, ResumeFromACheckpointIsBitExact) {
  auto dir = std::filesystem::temp_directory_path() / ("vkamp-per-layer-" + std::to_string(vkamp::platform::process_id()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "ck.bin").string();
  TrainConfig c = config_for(LossScaleMode::PerLayer, 1024);
  c.optimizer.lr = 0.05;
  c.optimizer.momentum = 0.9;
  c.inject_overflow = config::parse_step_ranges("4");
  StepGradient full = last_gradient(c, data, w, 12);
  TrainConfig first = c;
  first.checkpoint_path = path;
  last_gradient(first, data, w, 6);
  TrainConfig second = c;
  second.checkpoint_path = path;
  second.resume = true;
  StepGradient rest = last_gradient(second, data, w, 12);  // the checkpoint's weights replace w
  ASSERT_EQ(rest.steps.size(), 6u);
  ASSERT_EQ(full.steps.size(), 13u);
  for (size_t i = 0; i < rest.steps.size(); ++i) {
    const auto& f = full.steps[7 + i];
    EXPECT_EQ(rest.steps[i].step, f.step);
    EXPECT_EQ(rest.steps[i].loss, f.loss) << "step " << f.step;
    EXPECT_EQ(rest.steps[i].loss_scale, f.loss_scale) << "step " << f.step;
  }
  ASSERT_EQ(rest.layers.size(), full.layers.size());
  for (size_t l = 0; l < full.layers.size(); ++l) {
    EXPECT_EQ(rest.layers[l].scale, full.layers[l].scale) << "layer " << l;
    EXPECT_EQ(rest.layers[l].amax, full.layers[l].amax) << "layer " << l;
    EXPECT_EQ(rest.layers[l].overflows, full.layers[l].overflows) << "layer " << l;
  }
  EXPECT_EQ(rest.g, full.g);
  std::filesystem::remove_all(dir);
}

// A gradient summed from two layers would mix two scales: refused, naming
// where.
TEST(PerLayerScalingGraph, RefusesWhatIsNotAChainOfLayers) {
  graph::Graph g;
  g.input("x", graph::Shape::vector(4));
  g.linear("h", "x", g.param("w1", {4, 4}));
  g.linear("a", "h", g.param("w2", {4, 4}));
  g.add("y", "a", "h");  // a residual connection: y's gradient goes to two layers
  g.set_output("y");
  try {
    graph::scale_groups(g, g.nodes());
    FAIL() << "a residual graph was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'y' joins the outputs of layers 'a' and 'h'"), std::string::npos)
        << e.what();
  }
  graph::Graph chain;
  chain.input("x", graph::Shape::vector(4));
  chain.linear("h", "x", chain.param("w1", {4, 4}));
  chain.activation("t", "h", ops::Activation::Tanh);
  chain.linear("y", "t", chain.param("w2", {3, 4}), chain.param("b2", {3}));
  chain.set_output("y");
  graph::ScaleGroups sg = graph::scale_groups(chain, chain.nodes());
  ASSERT_EQ(sg.groups.size(), 2u);
  EXPECT_EQ(sg.groups[0].upstream, -1);
  EXPECT_EQ(sg.groups[1].upstream, 0);
  EXPECT_EQ(sg.groups[1].params, (std::vector<std::string>{"w2", "b2"}));
  EXPECT_EQ(sg.output_group, 1);
}

}  // namespace
}  // namespace vkamp::test
