// A graph model trains with the Trainer, and the memory plan reuses bytes
// without ever giving two live buffers the same ones.
#include "graph_models.hpp"
#include "vkamp/graph/memory_plan.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

class GraphTraining : public GpuTest {};

// Six fp16 epochs on a 3-class problem with 8 features: the loss falls to
// below 0.6 of where it started and the model classifies 80% right.
// `model`: a graph or a model string's spec; `level`: the precision level.
template <class Model>
void expect_learns(Model model, graph::AmpLevel level = graph::AmpLevel::O2) {
  config::TrainConfig c;
  c.precision = level == graph::AmpLevel::O0 ? Format::F32 : Format::F16;
  c.amp_level = level;
  c.batch = 16;
  c.epochs = 6;
  c.seed = 5;
  c.optimizer.lr = 0.05;
  c.scaler.histogram_interval = 0;
  auto data = data::HostData::classification(data::make_classification(512, 8, 3, 31));
  train::Trainer t(ctx(), c, std::move(model), train::LossKind::SoftmaxXent, data);
  std::vector<float> losses;
  t.on_step = [&](const train::StepMetrics& m) { losses.push_back(m.loss); };
  auto summary = t.run();
  ASSERT_FALSE(summary.failed) << summary.failure;
  ASSERT_GE(losses.size(), 64u);
  auto mean = [&](size_t from, size_t to) {
    double m = 0;
    for (size_t i = from; i < to; ++i) m += losses[i];
    return m / double(to - from);
  };
  EXPECT_LT(mean(losses.size() - 16, losses.size()), 0.6 * mean(0, 16));
  EXPECT_GT(t.evaluate(data), 0.8);
}

TEST_F(GraphTraining, ResidualMlpLossDecreases) { expect_learns(residual_mlp(8, 16, 3)); }

// Every precision level trains (O1 with its casts: fp32 activations and add).
TEST_F(GraphTraining, ResidualMlpLearnsAtEveryAmpLevel) {
  for (graph::AmpLevel level : {graph::AmpLevel::O0, graph::AmpLevel::O1, graph::AmpLevel::O3}) {
    SCOPED_TRACE(graph::amp_level_name(level));
    expect_learns(residual_mlp(8, 16, 3), level);
  }
}

// SiLU and sigmoid layers ('w' and 'i' in a model string).
TEST_F(GraphTraining, SiluAndSigmoidModelStringLossDecreases) { expect_learns(models::parse_model("8-16w-16i-3")); }

// A LayerNorm's gain starts at 1 and its bias at 0 (init: one / zero, as
// PyTorch starts them), and the weight beside them still draws its seeded
// Kaiming values.
TEST_F(GraphTraining, ConstantInitsStartAtOneAndZero) {
  graph::Graph g;
  g.input("x", graph::Shape::vector(6));
  g.param("ln.weight", {6}, graph::Init::One);
  g.param("ln.bias", {6}, graph::Init::Zero);
  g.param("fc.weight", {3, 6});
  g.layer_norm("ln", "x", "ln.weight", "ln.bias");
  g.linear("fc", "ln", "fc.weight");
  g.set_output("fc");
  train::Model m(ctx(), std::move(g), Format::F32, 4, 7, false, false);
  const std::vector<float> w = m.read_master();
  ASSERT_EQ(m.tensors().size(), 3u);
  for (const auto& t : m.tensors())
    for (uint32_t i = 0; i < t.size; ++i) {
      const float v = w[t.offset + i];
      if (t.name == "ln.weight") EXPECT_EQ(v, 1.0f) << t.name << "[" << i << "]";
      else if (t.name == "ln.bias") EXPECT_EQ(v, 0.0f) << t.name << "[" << i << "]";
      else EXPECT_TRUE(v != 0 && std::abs(v) <= 1.0f) << t.name << "[" << i << "] = " << v;  // Kaiming bound sqrt(6/6)
    }
}

TEST_F(GraphTraining, DeepChainReusesActivationMemory) {
  graph::Graph g;
  g.input("x", graph::Shape::vector(32));
  std::string x = "x";
  for (int l = 1; l <= 12; ++l) {
    std::string n = "fc" + std::to_string(l);
    g.param(n + ".weight", {32, 32});
    x = g.activation(n + ".act", g.linear(n, x, n + ".weight"), ops::Activation::ReLU);
  }
  g.param("head.weight", {4, 32});
  g.set_output(g.linear("head", x, "head.weight"));
  train::Model m(ctx(), std::move(g), Format::F16, 64, 1, true, true);
  graph::MemoryReport r = m.memory();
  // Training keeps every forward value for the backward, so the reuse is
  // the gradients': each takes the bytes of one whose producer has run.
  EXPECT_LT(r.activations * 3, r.activations_unshared * 2) << "gradients should share bytes along the chain";
  EXPECT_EQ(r.parameters, uint64_t(m.param_elements()) * (4 + 2 + 2));
  EXPECT_EQ(r.optimizer_state, uint64_t(m.param_elements()) * 8);
  expect_no_live_overlap(m.executor().placements());
}

TEST_F(GraphTraining, LeNetPlanHasNoLiveOverlap) {
  train::Model m(ctx(), models::parse_model("28x28x1-c6k5p2r-m2-c16k5r-m2-f-120r-84r-10"), Format::F16, 8, 1, false,
                 false);
  expect_no_live_overlap(m.executor().placements());
  EXPECT_GT(m.memory().workspace, 0u);  // the convs' im2col matrices
}

TEST(MemoryPlan, FirstFitSharesBytesOnlyAcrossTime) {
  // a and b overlap in time; c starts after a ends and takes a's bytes.
  auto plan = graph::plan_memory({{1000, 0, 2}, {500, 1, 4}, {1000, 3, 5}}, 256);
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.offsets[1], 1024u);
  EXPECT_EQ(plan.offsets[2], 0u);
  EXPECT_EQ(plan.pool_bytes, 1536u);
  EXPECT_EQ(plan.unshared_bytes, 1024u + 512u + 1024u);
}

}  // namespace
}  // namespace vkamp::test
