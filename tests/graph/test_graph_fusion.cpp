// The executor's epilogue fusion (a linear and the activation that alone
// reads it run as one GEMM): the same loss and gradients as the separate
// GEMM, bias_add and activation (VKAMP_FUSE_EPILOGUE=0), in fewer dispatches.
#include <cstdlib>
#include <random>
#include <string>

#include "graph_models.hpp"
#include "support/guarded.hpp"
#include "vkamp/knobs.hpp"

namespace vkamp::test {
namespace {

class GraphFusion : public GpuTest {};

// Fusion on or off for the scope of one model (the executor reads the
// context's paths when it is built and when it records), the activations'
// backward in the next GEMM (fuse_act_grad) with it unless said.
class FusionSwitch {
 public:
  FusionSwitch(bool fuse, bool act_grad, bool residual_grad) : use_(paths(fuse, act_grad, residual_grad)) {}

 private:
  static KernelPaths paths(bool fuse, bool act_grad, bool residual_grad) {
    KernelPaths p;
    p.fuse_epilogue = fuse;
    p.fuse_act_grad = act_grad;
    p.fuse_residual_grad = residual_grad;
    return p;
  }
  UsePaths use_;
};

struct Step {
  float loss = 0;
  std::vector<float> grads;
  uint32_t forward_dispatches = 0, backward_dispatches = 0;
  uint64_t activation_buffers_bytes = 0;  // before the memory plan shares them
};

// One forward and backward of softmax cross-entropy over a seeded batch.
Step step(bool fuse, Format fmt, graph::Graph g, uint32_t rows, uint32_t classes, bool act_grad = true,
          bool residual_grad = true) {
  FusionSwitch fusion(fuse, act_grad, residual_grad);
  train::Model model(ctx(), std::move(g), fmt, rows, /*seed=*/41, false, false);
  // The biases start at zero: shift every parameter by a seeded amount so
  // the epilogue's bias is not a no-op.
  std::vector<float> w = model.read_master();
  std::mt19937_64 gen(43);
  std::uniform_real_distribution<float> shift(-0.5f, 0.5f);
  for (const auto& t : model.tensors())
    for (uint32_t i = t.offset; i < t.offset + t.size; ++i) w[i] += shift(gen);
  model.write_master(w);
  auto data = data::make_classification(rows, model.inputs(), classes, 42);
  Buffer x = upload(ctx(), fmt, data.x);
  Buffer y(ctx(), rows * 4);
  y.write(data.y);
  Buffer one = upload(ctx(), Format::F32, std::vector<float>{1.0f});
  Buffer row_loss(ctx(), ops::softmax_xent_scratch_bytes(rows)), loss(ctx(), 4);
  Step out;
  {
    Sequence s(ctx());
    s.begin();
    model.record_forward(s, x, rows);
    out.forward_dispatches = s.dispatch_count();
    s.end();
  }
  Sequence s(ctx());
  s.begin();
  model.record_forward(s, x, rows);
  ops::softmax_xent_forward(s, fmt, model.output(), y, row_loss, loss, rows, classes);
  ops::softmax_xent_backward(s, fmt, model.output(), y, one, row_loss, model.doutput(), rows, classes);
  const uint32_t before_backward = s.dispatch_count();
  model.record_backward(s, x, rows, false);
  out.backward_dispatches = s.dispatch_count() - before_backward;
  s.end();
  s.run();
  out.loss = loss.read<float>()[0];
  out.grads = download(model.grads(), fmt, model.param_elements());
  out.activation_buffers_bytes = model.memory().activations_unshared;
  return out;
}

// In fp32 the fused store computes what the separate kernels do, operation
// for operation (the bias added in fp32, f of the same rounded z, ReLU's
// backward from y, which is positive exactly where z is): the same bits.
TEST_F(GraphFusion, Fp32MatchesTheUnfusedStepExactly) {
  for (ops::Activation act : ops::kActivations) {
    SCOPED_TRACE(ops::activation_name(act));
    Step fused = step(true, Format::F32, residual_mlp(6, 9, 4, act), 7, 4);
    Step plain = step(false, Format::F32, residual_mlp(6, 9, 4, act), 7, 4);
    EXPECT_EQ(fused.loss, plain.loss);
    EXPECT_EQ(fused.grads, plain.grads);
    // fc1, fc2 (GEMM + bias + activation each), the residual add, the head.
    EXPECT_EQ(fused.forward_dispatches, 4u);
    EXPECT_EQ(plain.forward_dispatches, 8u);
  }
}

// In bf16 the fused bias is added before z's one rounding, where bias_add
// rounds z and then z + b: a difference of one rounding of z per layer,
// which the backward carries into every gradient. Both sides are compared
// as approximations of the same exact step: within a few roundings.
TEST_F(GraphFusion, Bf16StaysWithinRoundingOfTheUnfusedStep) {
  for (ops::Activation act : ops::kActivations) {
    SCOPED_TRACE(ops::activation_name(act));
    Step fused = step(true, Format::BF16, residual_mlp(6, 9, 4, act), 7, 4);
    Step plain = step(false, Format::BF16, residual_mlp(6, 9, 4, act), 7, 4);
    EXPECT_NEAR(fused.loss, plain.loss, 8 * unit_roundoff(Format::BF16) * std::abs(plain.loss));
    std::vector<double> ref(plain.grads.begin(), plain.grads.end());
    EXPECT_TRUE(close_to(fused.grads, ref, nmse_bound(Format::BF16, 8)));
  }
}

// The activation's backward in the next GEMM's epilogue: the rounded
// product times f'(z), as activation.comp computes it from the stored dY,
// so the same bits in every format, in one backward dispatch fewer: fc1's
// activation, which fc2 alone reads (act2 feeds the residual add, and
// ReLU's backward reads y, so theirs stay passes of their own).
TEST_F(GraphFusion, ActivationBackwardInTheNextGemmChangesNoBit) {
  for (Format fmt : {Format::F32, Format::F16, Format::BF16})
    for (ops::Activation act : ops::kActivations) {
      SCOPED_TRACE(std::string(format_name(fmt)) + " " + ops::activation_name(act));
      Step fused = step(true, fmt, residual_mlp(6, 9, 4, act), 7, 4, true);
      Step apart = step(true, fmt, residual_mlp(6, 9, 4, act), 7, 4, false);
      EXPECT_EQ(fused.loss, apart.loss);
      EXPECT_EQ(fused.grads, apart.grads);
      EXPECT_EQ(fused.backward_dispatches + (act == ops::Activation::ReLU ? 0 : 1), apart.backward_dispatches);
    }
}

// Two pre-LayerNorm residual blocks (a GPT's, without attention) over a
// linear embedding, so the stream has a gradient.
graph::Graph residual_norm_blocks(uint32_t width, uint32_t hidden, uint32_t classes) {
  graph::Graph g;
  g.input("x", graph::Shape::vector(width));
  g.param("embed.weight", {width, width});
  for (const char* b : {"b1.", "b2."}) {
    const std::string p = b;
    g.param(p + "fc.weight", {hidden, width});
    g.param(p + "proj.weight", {width, hidden});
    g.param(p + "ln.weight", {width}, graph::Init::One);
    g.param(p + "ln.bias", {width}, graph::Init::Zero);
  }
  g.param("head.weight", {classes, width});
  std::string x = g.linear("embed", "x", "embed.weight");
  for (const char* b : {"b1.", "b2."}) {
    const std::string p = b;
    std::string h = g.layer_norm(p + "ln", x, p + "ln.weight", p + "ln.bias");
    h = g.activation(p + "gelu", g.linear(p + "fc", h, p + "fc.weight"), ops::Activation::GELU);
    x = g.add(p + "residual", x, g.linear(p + "proj", h, p + "proj.weight"));
  }
  g.linear("head", x, "head.weight");
  g.set_output("head");
  return g;
}

// The residual adds' input gradients in dY's own buffer, where each
// block's LayerNorm backward adds its part: copies are exact, so the same
// bits in every format; the two copies of each add's backward are gone,
// and so is a gradient buffer per add (whether the pool shrinks too is the
// memory plan's packing: not at these sizes).
TEST_F(GraphFusion, ResidualGradientInTheSumsBufferChangesNoBit) {
  for (Format fmt : {Format::F32, Format::F16, Format::BF16}) {
    SCOPED_TRACE(format_name(fmt));
    Step shared = step(true, fmt, residual_norm_blocks(6, 12, 4), 7, 4, true, true);
    Step copied = step(true, fmt, residual_norm_blocks(6, 12, 4), 7, 4, true, false);
    EXPECT_EQ(shared.loss, copied.loss);
    EXPECT_EQ(shared.grads, copied.grads);
    EXPECT_EQ(shared.backward_dispatches + 4, copied.backward_dispatches);
    EXPECT_LT(shared.activation_buffers_bytes, copied.activation_buffers_bytes);
  }
}

// A linear read by something besides its activation, or that is the
// graph's output, is not fused: the activation still has its input to read.
TEST_F(GraphFusion, LinearWithAnotherReaderStaysSeparate) {
  graph::Graph g;
  g.input("x", graph::Shape::vector(4));
  g.param("fc1.weight", {5, 4});
  g.param("head.weight", {3, 10});
  g.linear("fc1", "x", "fc1.weight");
  g.activation("a", "fc1", ops::Activation::GELU);
  g.concat("both", {"a", "fc1"});
  g.linear("head", "both", "head.weight");
  g.set_output("head");
  Step fused = step(true, Format::F32, g, 5, 3);
  Step plain = step(false, Format::F32, g, 5, 3);
  EXPECT_EQ(fused.forward_dispatches, plain.forward_dispatches);
  EXPECT_EQ(fused.grads, plain.grads);
}

}  // namespace
}  // namespace vkamp::test
