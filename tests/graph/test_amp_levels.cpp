// Precision levels (graph/precision_plan.hpp): which steps run in 16 bits,
// the casts the executor inserts where formats meet, and what each level
// does to the gradients of a conv + tanh + layer_norm + linear graph.
//
// The reference is the fp32 run (O0), whose gradients this file checks
// against central differences (as test_graph_gradients.cpp does for every
// op). A 16-bit level differs from it by its roundings: each tensor stored
// in 16 bits is rounded once (relative error <= u, the format's unit
// roundoff), in the forward and again as a gradient in the backward. The
// norm-wise error of the parameter gradients is bounded by the number R of
// 16-bit roundings on the longest forward + backward path, times u, times
// a conditioning factor K (layer_norm divides by a small standard deviation)
// that the fp32 run measures: K is taken as 4.
#include <cmath>
#include <random>
#include <string>

#include "graph_models.hpp"
#include "vkamp/graph/precision_plan.hpp"
#include "vkamp/ops/batch_norm.hpp"

namespace vkamp::test {
namespace {

class AmpLevels : public GpuTest {};

using graph::AmpLevel;

// x (4x4x2) -> conv 3x3 (3 channels) -> tanh -> layer_norm -> flatten -> linear (4 classes).
graph::Graph conv_ln_net() {
  graph::Graph g;
  g.input("x", graph::Shape::picture(4, 4, 2));
  g.param("conv.weight", {3, 3, 3, 2});
  g.param("conv.bias", {3}, graph::Init::Zero);
  g.param("ln.weight", {3}, graph::Init::One);
  g.param("ln.bias", {3}, graph::Init::Zero);
  g.param("fc.weight", {4, 48});
  g.param("fc.bias", {4}, graph::Init::Zero);
  g.conv2d("conv", "x", "conv.weight", "conv.bias", 1, 1);
  g.activation("act", "conv", ops::Activation::Tanh);
  g.layer_norm("ln", "act", "ln.weight", "ln.bias");
  g.flatten("flat", "ln");
  g.linear("fc", "flat", "fc.weight", "fc.bias");
  g.set_output("fc");
  return g;
}

constexpr uint32_t kRows = 8, kClasses = 4;

struct Step {
  std::vector<float> loss;  // per row
  std::vector<float> grads;
};

// One forward and backward of softmax cross-entropy over a seeded batch, at
// `level` in `fmt`; level == nullopt builds the model as every caller did
// before levels existed (no level argument).
Step step(Format fmt, std::optional<AmpLevel> level, graph::Graph g = conv_ln_net()) {
  auto model = level ? std::make_unique<train::Model>(ctx(), std::move(g), fmt, kRows, 41, false, false, *level)
                     : std::make_unique<train::Model>(ctx(), std::move(g), fmt, kRows, 41, false, false);
  // Non-zero biases and a non-trivial LayerNorm affine transform.
  std::vector<float> w = model->read_master();
  std::mt19937_64 gen(43);
  std::uniform_real_distribution<float> shift(-0.3f, 0.3f);
  for (const auto& t : model->tensors())
    for (uint32_t i = t.offset; i < t.offset + t.size; ++i) w[i] += shift(gen);
  model->write_master(w);
  auto data = data::make_classification(kRows, model->inputs(), kClasses, 42);
  Buffer x = upload(ctx(), fmt, data.x);
  Buffer y(ctx(), kRows * 4);
  y.write(data.y);
  Buffer one = upload(ctx(), Format::F32, std::vector<float>{1.0f});
  Buffer row_loss(ctx(), ops::softmax_xent_scratch_bytes(kRows)), loss(ctx(), 4);
  Sequence s(ctx());
  s.begin();
  model->record_forward(s, x, kRows);
  ops::softmax_xent_forward(s, fmt, model->output(), y, row_loss, loss, kRows, kClasses);
  ops::softmax_xent_backward(s, fmt, model->output(), y, one, row_loss, model->doutput(), kRows, kClasses);
  model->record_backward(s, x, kRows, false);
  s.end();
  s.run();
  auto losses = row_loss.read<float>();
  losses.pop_back();  // the count of targets
  return {losses, download(model->grads(), fmt, model->param_elements())};
}

std::string listing(const graph::Executor& e) {
  std::string out;
  for (size_t k = 0; k < e.steps().size(); ++k)
    out += e.steps()[k].name + ":" + e.steps()[k].op + ":" + format_name(e.step_format(k)) + " ";
  return out;
}

TEST_F(AmpLevels, O1RunsGemmsIn16BitsAndCastsWhereFormatsMeet) {
  train::Model o1(ctx(), conv_ln_net(), Format::F16, kRows, 1, false, false, AmpLevel::O1);
  // conv in fp16; tanh and layer_norm in fp32 (their parameters read as the
  // fp32 masters); flatten views the fp32 tensor; the linear casts it back.
  EXPECT_EQ(listing(o1.executor()),
            "conv:conv2d:fp16 conv@fp32:cast:fp32 act:activation:fp32 ln.weight@fp32:cast:fp32 "
            "ln.bias@fp32:cast:fp32 ln:layer_norm:fp32 flat:flatten:fp32 flat@fp16:cast:fp16 fc:linear:fp16 ");
  for (AmpLevel level : {AmpLevel::O2, AmpLevel::O3}) {
    train::Model m(ctx(), conv_ln_net(), Format::F16, kRows, 1, false, false, level);
    EXPECT_EQ(listing(m.executor()),
              "conv:conv2d:fp16 act:activation:fp16 ln:layer_norm:fp16 flat:flatten:fp16 fc:linear:fp16 ");
  }
  train::Model o0(ctx(), conv_ln_net(), Format::F32, kRows, 1, false, false, AmpLevel::O0);
  EXPECT_EQ(listing(o0.executor()),
            "conv:conv2d:fp32 act:activation:fp32 ln:layer_norm:fp32 flat:flatten:fp32 fc:linear:fp32 ");
  // O0 in a 16-bit format (the command line sets fp32; a caller may not):
  // fp32 steps on the masters, the output still written in the run's format.
  train::Model o0_16(ctx(), conv_ln_net(), Format::F16, kRows, 1, false, false, AmpLevel::O0);
  EXPECT_EQ(listing(o0_16.executor()),
            "x@fp32:cast:fp32 conv.weight@fp32:cast:fp32 conv.bias@fp32:cast:fp32 conv:conv2d:fp32 "
            "act:activation:fp32 ln.weight@fp32:cast:fp32 ln.bias@fp32:cast:fp32 ln:layer_norm:fp32 "
            "flat:flatten:fp32 flat@fp16:cast:fp16 fc:linear:fp16 ");
}

// O1 unfuses a linear and its activation: the activation runs in fp32.
TEST_F(AmpLevels, O1RunsTheActivationAfterALinearInFp32) {
  train::Model o1(ctx(), residual_mlp(5, 7, 3), Format::BF16, 4, 1, false, false, AmpLevel::O1);
  EXPECT_EQ(listing(o1.executor()),
            "fc1:linear:bf16 fc1@fp32:cast:fp32 act1:activation:fp32 act1@bf16:cast:bf16 fc2:linear:bf16 "
            "fc2@fp32:cast:fp32 act2:activation:fp32 x@fp32:cast:fp32 residual:add:fp32 residual@bf16:cast:bf16 "
            "head:linear:bf16 ");
}

TEST_F(AmpLevels, MemoryIsReportedPerFormat) {
  train::Model o1(ctx(), conv_ln_net(), Format::F16, kRows, 1, false, false, AmpLevel::O1);
  train::Model o2(ctx(), conv_ln_net(), Format::F16, kRows, 1, false, false, AmpLevel::O2);
  const auto m1 = o1.memory(), m2 = o2.memory();
  ASSERT_EQ(m2.activations_by_format.size(), 1u);
  EXPECT_GT(m2.activations_by_format.at(Format::F16), 0u);
  ASSERT_EQ(m1.activations_by_format.size(), 2u);
  // tanh's and layer_norm's outputs and their gradients: 3 tensors of 48
  // fp32 values per row, in both directions (act, ln, and conv's cast), and
  // the layer_norm parameters' fp32 gradients.
  EXPECT_GE(m1.activations_by_format.at(Format::F32), uint64_t(2) * 3 * kRows * 48 * 4);
  EXPECT_GT(m1.activations_unshared, m2.activations_unshared);
}

TEST_F(AmpLevels, O2IsTheDefaultBitForBit) {
  for (Format fmt : {Format::F16, Format::BF16}) {
    SCOPED_TRACE(format_name(fmt));
    const Step before = step(fmt, std::nullopt), o2 = step(fmt, AmpLevel::O2);
    EXPECT_EQ(before.loss, o2.loss);
    EXPECT_EQ(before.grads, o2.grads);
  }
}

TEST_F(AmpLevels, O0IsTheFp32RunBitForBit) {
  const Step fp32 = step(Format::F32, std::nullopt), o0 = step(Format::F32, AmpLevel::O0);
  EXPECT_EQ(fp32.loss, o0.loss);
  EXPECT_EQ(fp32.grads, o0.grads);
}

// The fp32 run is right (central differences), so it can be the reference.
TEST_F(AmpLevels, TheFp32ReferenceMatchesFiniteDifferences) {
  expect_gradients_match(check_gradients(conv_ln_net(), kRows, kClasses, 21));
}

double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    num += std::pow(double(got[i]) - want[i], 2);
    den += std::pow(double(want[i]), 2);
  }
  return std::sqrt(num / den);
}

// Unit roundoff of the 16-bit formats: 2^-11 (fp16), 2^-8 (bf16).
double unit_roundoff(Format fmt) { return fmt == Format::F16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8); }

TEST_F(AmpLevels, GradientsDifferFromFp32ByTheirLevelsRoundings) {
  const Step ref = step(Format::F32, AmpLevel::O0);
  // Roundings to 16 bits on the longest path (x -> conv.weight's gradient):
  // O2: the input, the weights, conv's, tanh's, layer_norm's and fc's
  // outputs; their gradients; conv.weight's gradient: 12.
  // O1: the input, the weights, conv's output, the cast before fc, fc's
  // output; the gradients of fc's output, of flat@fp16, of conv's output
  // (its cast's backward); conv.weight's gradient: 9.
  constexpr double K = 4;
  for (Format fmt : {Format::F16, Format::BF16}) {
    SCOPED_TRACE(format_name(fmt));
    const double u = unit_roundoff(fmt);
    const double e1 = relative_error(step(fmt, AmpLevel::O1).grads, ref.grads);
    const double e2 = relative_error(step(fmt, AmpLevel::O2).grads, ref.grads);
    EXPECT_LT(e1, K * 9 * u);
    EXPECT_LT(e2, K * 12 * u);
    EXPECT_GT(e1, 0.0) << "O1 rounds some tensors to 16 bits";
    // O0 in a 16-bit format: the input, fc's weights, flat@fp16, fc's
    // output; their gradients back to flat, and each parameter's: 7.
    EXPECT_LT(relative_error(step(fmt, AmpLevel::O0).grads, ref.grads), K * 7 * u);
    std::printf("  %s: relative gradient error O1 %.3g, O2 %.3g (u = %.3g)\n", format_name(fmt), e1, e2, u);
  }
}

// A tensor read in two formats: h = fc1(x) feeds fc2 (fp16, directly) and
// tanh (fp32, through a cast); the output add runs in fp16 (it writes the
// model output). h's gradient is fc2's contribution plus the cast's, which
// adds in fp32 and rounds once (convert with accumulate).
graph::Graph fan_out_net() {
  graph::Graph g;
  g.input("x", graph::Shape::vector(6));
  g.param("fc1.weight", {5, 6});
  g.param("fc2.weight", {5, 5});
  g.param("head.weight", {kClasses, 5});
  g.linear("fc1", "x", "fc1.weight");
  g.activation("act", "fc1", ops::Activation::Tanh);
  g.linear("fc2", "fc1", "fc2.weight");
  g.add("sum", "act", "fc2");
  g.linear("head", "sum", "head.weight");
  g.set_output("head");
  return g;
}

TEST_F(AmpLevels, AGradientFromTwoFormatsIsTheSumOfBoth) {
  train::Model o1(ctx(), fan_out_net(), Format::F16, kRows, 1, false, false, AmpLevel::O1);
  EXPECT_EQ(listing(o1.executor()),
            "fc1:linear:fp16 fc1@fp32:cast:fp32 act:activation:fp32 fc2:linear:fp16 fc2@fp32:cast:fp32 "
            "sum:add:fp32 sum@fp16:cast:fp16 head:linear:fp16 ");
  const Step ref = step(Format::F32, AmpLevel::O0, fan_out_net());
  // Longest path to fc1.weight's gradient: x, fc1.weight, fc1's output,
  // fc2.weight, fc2's output, sum@fp16, head.weight, head's output; the
  // gradients of head's output, sum@fp16, fc2's output, fc1's output (its
  // two contributions) and fc1.weight: 14.
  const double e = relative_error(step(Format::F16, AmpLevel::O1, fan_out_net()).grads, ref.grads);
  EXPECT_LT(e, 4 * 14 * unit_roundoff(Format::F16));
  // Without fc2's contribution (or without the cast's) the error would be
  // of the order of the gradient itself.
  EXPECT_GT(e, 0.0);
}

// With accumulate (gradient accumulation over micro-batches), a parameter
// read in fp32 (layer_norm's, through its master) adds its new fp32
// gradient to the 16-bit one in fp32 and rounds once: twice the same batch
// gives twice the gradient, within one rounding of the sum.
TEST_F(AmpLevels, AParameterReadInFp32AccumulatesItsGradient) {
  train::Model m(ctx(), conv_ln_net(), Format::F16, kRows, 1, false, false, AmpLevel::O1);
  auto data = data::make_classification(kRows, m.inputs(), kClasses, 42);
  Buffer x = upload(ctx(), Format::F16, data.x);
  Buffer y(ctx(), kRows * 4);
  y.write(data.y);
  Buffer one = upload(ctx(), Format::F32, std::vector<float>{1.0f});
  Buffer row_loss(ctx(), ops::softmax_xent_scratch_bytes(kRows)), loss(ctx(), 4);
  auto run = [&](bool accumulate) {
    Sequence s(ctx());
    s.begin();
    m.record_forward(s, x, kRows);
    ops::softmax_xent_forward(s, Format::F16, m.output(), y, row_loss, loss, kRows, kClasses);
    ops::softmax_xent_backward(s, Format::F16, m.output(), y, one, row_loss, m.doutput(), kRows, kClasses);
    m.record_backward(s, x, kRows, accumulate);
    s.end();
    s.run();
    return download(m.grads(), Format::F16, m.param_elements());
  };
  const std::vector<float> once = run(false), twice = run(true);
  const double u = unit_roundoff(Format::F16);
  size_t checked = 0;
  for (const auto& t : m.tensors()) {
    if (t.name.rfind("ln.", 0) != 0) continue;
    for (uint32_t i = t.offset; i < t.offset + t.size; ++i, ++checked)
      EXPECT_NEAR(twice[i], 2 * once[i], 2 * std::abs(once[i]) * u) << t.name << "[" << i - t.offset << "]";
  }
  EXPECT_EQ(checked, 6u);
}

// O3 rounds BatchNorm's batch statistics and its weight and bias to the
// 16-bit format; O2 keeps them in fp32. One training forward of a lone
// BatchNorm over 8 rows of 2 features, each x exact in fp16, so the fp32
// statistics are exact or within a few fp32 ulps of the double ones.
// Feature 0's mean, 8000.5 / 8 = 1000.0625, is not an fp16 value (spacing
// 0.5 there) and rounds to 1000 from far inside the rounding interval, so
// fp32 noise cannot flip it: at O3 each of its xhat moves by 0.0625 / sigma
// (about 0.054), some 30 fp16 ulps of y. The weight 1.3003 is not an fp16
// value either (a smaller change: feature 1's mean and variance are fp16
// values). Each level must match its own double
// reference within 1.5 fp16 ulps of y (one rounding of y, plus fp32 noise
// far below an ulp) and the references must differ by more than that, so
// the check cannot pass at both levels with the same behaviour.
TEST_F(AmpLevels, O3RoundsBatchNormStatisticsAndParametersTo16Bits) {
  constexpr uint32_t kBnRows = 8, c = 2;
  const std::vector<float> column0 = {998, 999, 1001, 1002, 1000, 1000.5f, 999.5f, 1000.5f};
  const std::vector<float> column1 = {10, 12, 9, 11, 10.5f, 9.5f, 13, 8};
  std::vector<float> xs;
  for (uint32_t r = 0; r < kBnRows; ++r) xs.insert(xs.end(), {column0[r], column1[r]});
  const float weight = 1.3003f, bias = -0.25f;
  auto run = [&](AmpLevel level) {
    graph::Graph g;
    g.input("x", graph::Shape::vector(c));
    g.batch_norm("bn", "x");
    g.set_output("bn");
    train::Model m(ctx(), std::move(g), Format::F16, kBnRows, 1, false, false, level);
    std::vector<float> w = m.read_master();
    for (const auto& t : m.tensors())
      for (uint32_t i = t.offset; i < t.offset + t.size; ++i) w[i] = t.name == "bn.weight" ? weight : bias;
    m.write_master(w);
    Buffer x = upload(ctx(), Format::F16, xs);
    Sequence s(ctx());
    s.begin();
    m.record_forward(s, x, kBnRows);
    s.end();
    s.run();
    return download(m.output(), Format::F16, kBnRows * c);
  };
  auto reference = [&](bool rounded) {
    auto r16 = [&](double v) { return rounded ? double(round_to(Format::F16, float(v))) : v; };
    std::vector<double> y(kBnRows * c);
    for (uint32_t f = 0; f < c; ++f) {
      double mean = 0, var = 0;
      for (uint32_t r = 0; r < kBnRows; ++r) mean += xs[r * c + f];
      mean /= kBnRows;
      for (uint32_t r = 0; r < kBnRows; ++r) var += (xs[r * c + f] - mean) * (xs[r * c + f] - mean);
      var /= kBnRows;
      const double m16 = r16(mean), v16 = r16(var), w16 = r16(weight), b16 = r16(bias);
      for (uint32_t r = 0; r < kBnRows; ++r)
        y[r * c + f] = (xs[r * c + f] - m16) / std::sqrt(v16 + ops::kBatchNormEps) * w16 + b16;
    }
    return y;
  };
  const std::vector<double> exact = reference(false), rounded = reference(true);
  const double u = unit_roundoff(Format::F16);
  auto tolerance = [&](double y) { return 3 * u * std::abs(y) + 6e-8; };  // 1.5 ulps (ulp = 2u|y|), + fp16's subnormal spacing
  size_t apart = 0;
  for (size_t i = 0; i < exact.size(); ++i) apart += std::abs(exact[i] - rounded[i]) > 2 * tolerance(exact[i]);
  EXPECT_GE(apart, kBnRows) << "the two references must tell the levels apart";
  const std::vector<float> o2 = run(AmpLevel::O2), o3 = run(AmpLevel::O3);
  for (size_t i = 0; i < exact.size(); ++i) {
    EXPECT_NEAR(o2[i], exact[i], tolerance(exact[i])) << "O2, y[" << i << "]";
    EXPECT_NEAR(o3[i], rounded[i], tolerance(rounded[i])) << "O3, y[" << i << "]";
  }
}

}  // namespace
}  // namespace vkamp::test
