// Whole-graph gradients against central differences: a residual block (with
// tanh, GELU, sigmoid and SiLU, each linear fused with its activation), a
// parameter used by two nodes (the sum of both uses), an activation feeding
// two ops (the sum of both gradients), dropout, concat, layer_norm and rms_norm (inside the
// network, and on the model input, where no input gradient is wanted),
// batch_norm in training mode (conv-BN and linear-BN, whose batch statistics
// depend on the weights, and on the model input), and a Llama block (rope
// with grouped-query heads, attention, glu).
#include <tuple>

#include "graph_models.hpp"

namespace vkamp::test {
namespace {

class GraphGradients : public GpuTest {};

TEST_F(GraphGradients, ResidualMlpMatchesFiniteDifferences) {
  // tanh: smooth everywhere, so central differences are accurate.
  expect_gradients_match(check_gradients(residual_mlp(5, 7, 3, ops::Activation::Tanh), 6, 3, 21));
}

// GELU is smooth too. Both blocks' linears run fused with their activation
// (the executor's epilogue fusion), unless VKAMP_FUSE_EPILOGUE=0. ReLU's
// kinks would make central differences flaky: the fused ReLU is checked
// against the unfused step bit for bit (test_graph_fusion.cpp).
TEST_F(GraphGradients, ResidualGeluMlpMatchesFiniteDifferences) {
  expect_gradients_match(check_gradients(residual_mlp(5, 7, 3, ops::Activation::GELU), 6, 3, 26));
}

// Sigmoid and SiLU, smooth as well, fused likewise.
TEST_F(GraphGradients, ResidualSigmoidAndSiluMlpsMatchFiniteDifferences) {
  for (ops::Activation act : {ops::Activation::Sigmoid, ops::Activation::SiLU}) {
    SCOPED_TRACE(ops::activation_name(act));
    expect_gradients_match(check_gradients(residual_mlp(5, 7, 3, act), 6, 3, 31));
  }
}

TEST_F(GraphGradients, TiedWeightGetsTheSumOfBothUses) {
  // One square weight applied twice: h = tanh(x W^T), y = head(h W^T).
  graph::Graph g;
  g.input("x", graph::Shape::vector(6));
  g.param("tied.weight", {6, 6});
  g.param("head.weight", {3, 6});
  g.linear("first", "x", "tied.weight");
  g.activation("first.act", "first", ops::Activation::Tanh);
  g.linear("second", "first.act", "tied.weight");
  g.activation("second.act", "second", ops::Activation::Tanh);
  g.linear("head", "second.act", "head.weight");
  g.set_output("head");
  expect_gradients_match(check_gradients(std::move(g), 5, 3, 22));
}

TEST_F(GraphGradients, FanOutSumsBothGradients) {
  // a = tanh(fc1(x)) feeds fc2 and fc3 (and fc3's output is added to fc2's).
  graph::Graph g;
  g.input("x", graph::Shape::vector(4));
  g.param("fc1.weight", {6, 4});
  g.param("fc2.weight", {3, 6});
  g.param("fc3.weight", {3, 6});
  g.linear("fc1", "x", "fc1.weight");
  g.activation("a", "fc1", ops::Activation::Tanh);
  g.linear("fc2", "a", "fc2.weight");
  g.activation("b", "a", ops::Activation::Tanh);  // a second, non-accumulating consumer of a
  g.linear("fc3", "b", "fc3.weight");
  g.add("sum", "fc2", "fc3");
  g.set_output("sum");
  expect_gradients_match(check_gradients(std::move(g), 5, 3, 23));
}

// Dropout (p = 1/2) between two linears. Outside a training step the
// executor draws from step 0 of its own counter, so every forward of the
// difference quotients keeps the same elements, and the backward, which
// draws them again, must drop exactly those.
TEST_F(GraphGradients, DropoutMatchesFiniteDifferences) {
  graph::Graph g;
  g.input("x", graph::Shape::vector(4));
  g.param("fc1.weight", {8, 4});
  g.param("head.weight", {3, 8});
  g.linear("fc1", "x", "fc1.weight");
  g.activation("a", "fc1", ops::Activation::Tanh);
  g.node("drop", "dropout", {"a"}, {.p = 0.5});
  g.linear("head", "drop", "head.weight");
  g.set_output("head");
  expect_gradients_match(check_gradients(std::move(g), 5, 3, 27));
}

TEST_F(GraphGradients, ConcatMatchesFiniteDifferences) {
  graph::Graph g;
  g.input("x", graph::Shape::vector(4));
  g.param("fc1.weight", {5, 4});
  g.param("fc2.weight", {2, 4});
  g.param("head.weight", {3, 12});
  g.linear("fc1", "x", "fc1.weight");
  g.activation("a", "fc1", ops::Activation::Tanh);
  g.linear("fc2", "x", "fc2.weight");
  g.concat("joined", {"a", "fc2", "a"});  // a twice: its gradient sums two slices
  g.linear("head", "joined", "head.weight");
  g.set_output("head");
  expect_gradients_match(check_gradients(std::move(g), 5, 3, 24));
}

TEST_F(GraphGradients, LayerNormMatchesFiniteDifferences) {
  // gamma and beta start Kaiming-uniform: a gamma of 1 and a beta of 0
  // would leave half of their gradient untested.
  graph::Graph g;
  g.input("x", graph::Shape::vector(5));
  g.param("in_ln.gamma", {5});
  g.param("in_ln.beta", {5});
  g.param("fc1.weight", {8, 5});
  g.param("ln.gamma", {8});
  g.param("ln.beta", {8});
  g.param("head.weight", {3, 8});
  g.layer_norm("in_ln", "x", "in_ln.gamma", "in_ln.beta");
  g.linear("fc1", "in_ln", "fc1.weight");
  g.layer_norm("ln", "fc1", "ln.gamma", "ln.beta");
  g.activation("a", "ln", ops::Activation::Tanh);
  g.linear("head", "a", "head.weight");
  g.set_output("head");
  expect_gradients_match(check_gradients(std::move(g), 6, 3, 25));
}

// RMSNorm (Llama's) at its input and between two linears, its weights drawn
// normal (not Llama's 1s, and not 0: with no bias, a zero weight would
// stop every gradient) so that no gradient hides behind them.
TEST_F(GraphGradients, RmsNormMatchesFiniteDifferences) {
  graph::Graph g;
  g.input("x", graph::Shape::vector(5));
  g.param("in_norm.weight", {5}, graph::Init::Normal, 0.7);
  g.param("fc1.weight", {8, 5});
  g.param("norm.weight", {8}, graph::Init::Normal, 0.7);
  g.param("head.weight", {3, 8});
  g.rms_norm("in_norm", "x", "in_norm.weight", 1e-6);
  g.linear("fc1", "in_norm", "fc1.weight");
  g.rms_norm("norm", "fc1", "norm.weight", 1e-5);
  g.activation("a", "norm", ops::Activation::SiLU);
  g.linear("head", "a", "head.weight");
  g.set_output("head");
  expect_gradients_match(check_gradients(std::move(g), 6, 3, 26));
}

// A Llama block on a sequence of 4 positions: q, k and v projections
// (2 query heads sharing 1 key/value head), the rotary embedding, causal
// attention, the output projection, and a SwiGLU MLP into the residual
// stream. The gradient reaches every projection through rope's turn back
// and its sum over the shared key/value head.
TEST_F(GraphGradients, LlamaBlockWithRopeGqaAndSwigluMatchesFiniteDifferences) {
  graph::Graph g;
  g.input("x", graph::Shape::sequence(4, 6));
  for (auto [name, out, in] : {std::tuple{"q_proj", 8u, 6u}, std::tuple{"k_proj", 4u, 6u},
                               std::tuple{"v_proj", 4u, 6u}, std::tuple{"o_proj", 6u, 8u},
                               std::tuple{"gate_proj", 10u, 6u}, std::tuple{"up_proj", 10u, 6u},
                               std::tuple{"down_proj", 6u, 10u}})
    g.param(std::string(name) + ".weight", {out, in});
  g.param("head.weight", {3, 24});
  auto linear = [&](const std::string& name, const std::string& x) { return g.linear(name, x, name + ".weight"); };
  const std::string qkv = g.rope("rope", linear("q_proj", "x"), linear("k_proj", "x"), linear("v_proj", "x"), 2, 1,
                                 ops::Rope{.theta = 100});
  const std::string h = g.add("attn.residual", "x", linear("o_proj", g.attention("attn", qkv, 2)));
  const std::string m = g.glu("mlp", linear("gate_proj", h), linear("up_proj", h), ops::Activation::SiLU);
  g.add("mlp.residual", h, linear("down_proj", m));
  g.flatten("flat", "mlp.residual");
  g.linear("head", "flat", "head.weight");
  g.set_output("head");
  // The loss (12.9 over 5 rows) carries a few fp32 ulps (1e-6 each) of
  // rounding, which Richardson's step divides by h/3: at h = 1e-2 that
  // exceeded the bound in 2 directions of 15, at 4e-2 in 1 of 60. At 0.16
  // the error measured at most 0.19 of the bound over 190 directions, the
  // h^4 truncation still far below it.
  expect_gradients_match(check_gradients(std::move(g), 5, 3, 47, 0.16));
}

// LoRA adapters on frozen weights (Init::Normal, so the base is not 0):
// the gradient reaches A and B of both layers, through a frozen RMSNorm
// and a frozen bias, and only them (the frozen tensors are no parameters
// of the check, which moves the trained ones alone). B starts nonzero
// here; at PEFT's zero the loss would not depend on A at all.
TEST_F(GraphGradients, LoraOnFrozenWeightsMatchesFiniteDifferences) {
  graph::Graph g;
  g.input("x", graph::Shape::sequence(3, 6));
  g.frozen("fc1.weight", {8, 6}, graph::Init::Normal, 0.4);
  g.frozen("fc1.bias", {8}, graph::Init::Normal, 0.3);
  g.frozen("norm.weight", {8}, graph::Init::Normal, 0.7);
  g.frozen("fc2.weight", {5, 8}, graph::Init::Normal, 0.4);
  g.param("fc1.lora_A.weight", {2, 6});
  g.param("fc1.lora_B.weight", {8, 2}, graph::Init::Normal, 0.5);
  g.param("fc2.lora_A.weight", {3, 8});
  g.param("fc2.lora_B.weight", {5, 3}, graph::Init::Normal, 0.5);
  g.param("head.weight", {3, 15});
  g.lora("fc1", "x", "fc1.weight", "fc1.lora_A.weight", "fc1.lora_B.weight", 2.0, "fc1.bias");
  g.rms_norm("norm", "fc1", "norm.weight", 1e-6);
  g.activation("a", "norm", ops::Activation::SiLU);
  // fc2's adapter reads a dropout of its input (PEFT's lora_dropout): the
  // mask is fixed for the check, as in DropoutMatchesFiniteDifferences.
  g.node("fc2.lora_dropout", "dropout", {"a"}, {.p = 0.3});
  g.lora("fc2", "a", "fc2.weight", "fc2.lora_A.weight", "fc2.lora_B.weight", 0.5, "", "fc2.lora_dropout");
  g.flatten("flat", "fc2");
  g.linear("head", "flat", "head.weight");
  g.set_output("head");
  expect_gradients_match(check_gradients(std::move(g), 4, 3, 61));
}

// BatchNorm's weight and bias start at 1 and 0 in PyTorch; drawn normal
// here so that neither is a special value the gradient could hide behind.
std::string batch_norm_drawn(graph::Graph& g, const std::string& name, const std::string& x, uint32_t c) {
  g.param(name + ".weight", {c}, graph::Init::Normal, 0.7);
  g.param(name + ".bias", {c}, graph::Init::Normal, 0.5);
  g.buffer(name + ".running_mean", {c}, graph::Init::Zero);
  g.buffer(name + ".running_var", {c}, graph::Init::One);
  g.buffer(name + ".num_batches_tracked", {1}, graph::Init::Zero);
  return g.node(name, "batch_norm",
                {x, name + ".weight", name + ".bias", name + ".running_mean", name + ".running_var",
                 name + ".num_batches_tracked"});
}

// BatchNorm2d over a conv's channels (6 examples x 16 positions per
// channel), then tanh; the conv's gradient goes through the batch
// statistics (the mean and variance terms of dx).
TEST_F(GraphGradients, ConvBatchNormMatchesFiniteDifferences) {
  graph::Graph g;
  g.input("x", graph::Shape::picture(4, 4, 2));
  g.param("conv1.weight", {3, 3, 3, 2});
  g.param("conv1.bias", {3}, graph::Init::Normal, 0.3);
  g.param("head.weight", {3, 48});
  g.conv2d("conv1", "x", "conv1.weight", "conv1.bias", 1, 1);
  batch_norm_drawn(g, "bn1", "conv1", 3);
  g.activation("a", "bn1", ops::Activation::Tanh);
  g.flatten("flat", "a");
  g.linear("head", "flat", "head.weight");
  g.set_output("head");
  expect_gradients_match(check_gradients(std::move(g), 6, 3, 27));
}

// BatchNorm1d after a linear layer, and on the model input (no dx wanted).
TEST_F(GraphGradients, LinearBatchNormMatchesFiniteDifferences) {
  graph::Graph g;
  g.input("x", graph::Shape::vector(5));
  g.param("fc1.weight", {7, 5});
  g.param("head.weight", {3, 7});
  batch_norm_drawn(g, "in_bn", "x", 5);
  g.linear("fc1", "in_bn", "fc1.weight");
  batch_norm_drawn(g, "bn1", "fc1", 7);
  g.activation("a", "bn1", ops::Activation::Tanh);
  g.linear("head", "a", "head.weight");
  g.set_output("head");
  expect_gradients_match(check_gradients(std::move(g), 6, 3, 28));
}

}  // namespace
}  // namespace vkamp::test
