// The overflow decision of the AMP pass (amp_check + step_control, run
// directly): every inf and NaN bit pattern of every format is an overflow
// when it is one gradient among thousands; -0, subnormals and the largest
// finite value are not, and neither is a finite gradient whose sum of
// squares would overflow fp32 (the norm is a scaled sum). Then the same
// through the Trainer: bf16 and fp32 at a loss scale of 2^100 skip nothing.
#include <cmath>
#include <cstring>

#include "amp_pass.hpp"
#include "support/gpu_test.hpp"
#include "vkamp/data/dataset.hpp"
#include "vkamp/train/gpu_state.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

using train::StepRecord;

struct Patterns {
  Format fmt;
  uint32_t pos_inf, neg_inf, quiet_nan, signalling_nan, neg_zero, min_subnormal, max_finite;
};

// Bit patterns, 16-bit formats in the low half. cb16 is 1-6-9: exponent
// field 0x7E00, quiet bit 0x0100.
const Patterns kPatterns[] = {
    {Format::F32, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0x80000000, 0x00000001, 0x7F7FFFFF},
    {Format::F16, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x8000, 0x0001, 0x7BFF},
    {Format::BF16, 0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0x8000, 0x0001, 0x7F7F},
    {Format::CB16, 0x7E00, 0xFE00, 0x7F00, 0x7E01, 0x8000, 0x0001, 0x7DFF},
};

const uint32_t kCount = 3000;     // gradients; several amp_check partials
const uint32_t kPartials = 3;     // as the trainer would pick for a few thousand
// amp_check and step_control once over `bits` at loss scale `scale`.
StepRecord decide(Format fmt, const std::vector<uint32_t>& bits, float scale) {
  return run_amp_pass(fmt, bits, scale, {}, kPartials).record;
}

// Small finite gradients (0.001 .. 0.01 in the format) with one pattern at `at`.
std::vector<uint32_t> gradients_with(Format fmt, uint32_t pattern, uint32_t at) {
  std::vector<float> v(kCount);
  for (uint32_t i = 0; i < kCount; ++i) v[i] = (i % 2 ? -1.0f : 1.0f) * (0.001f + 0.009f * float(i % 97) / 97);
  auto packed = pack(fmt, v);
  size_t eb = format_bytes(fmt);
  std::vector<uint32_t> bits(kCount, 0);
  for (uint32_t i = 0; i < kCount; ++i) std::memcpy(&bits[i], &packed[i * eb], eb);
  bits[at] = pattern;
  return bits;
}

class OverflowDetection : public GpuTestP<Patterns> {};

TEST_P(OverflowDetection, NonFiniteBitPatternsAreOverflowsAndFiniteExtremesAreNot) {
  const Patterns& p = GetParam();
  const uint32_t at = 2017;  // in the last partial, not at a boundary
  for (auto [name, bits] : {std::pair{"+inf", p.pos_inf}, std::pair{"-inf", p.neg_inf},
                            std::pair{"quiet NaN", p.quiet_nan}, std::pair{"signalling NaN", p.signalling_nan}}) {
    StepRecord r = decide(p.fmt, gradients_with(p.fmt, bits, at), 1024);
    EXPECT_EQ(r.overflow, 1u) << format_name(p.fmt) << " " << name;
    EXPECT_EQ(r.skipped, 1u) << format_name(p.fmt) << " " << name;
  }
  for (auto [name, bits] : {std::pair{"-0", p.neg_zero}, std::pair{"smallest subnormal", p.min_subnormal},
                            std::pair{"largest finite", p.max_finite}}) {
    StepRecord r = decide(p.fmt, gradients_with(p.fmt, bits, at), 1);
    EXPECT_EQ(r.overflow, 0u) << format_name(p.fmt) << " " << name;
    EXPECT_EQ(r.skipped, 0u) << format_name(p.fmt) << " " << name;
    // The norm is finite too, except around fp32's own largest value, whose
    // norm can round past it in the last sqrt (3 ulp in Vulkan).
    if (!(p.fmt == Format::F32 && bits == p.max_finite)) {
      EXPECT_TRUE(std::isfinite(r.grad_norm)) << format_name(p.fmt) << " " << name << ": " << r.grad_norm;
    }
  }
}

// Every gradient at the largest finite value: the sum of squares of
// thousands of them is far beyond fp32 (for bf16, (3.4e38)^2), yet nothing
// overflowed, so nothing is skipped.
TEST_P(OverflowDetection, HugeFiniteGradientsEverywhereAreNotAnOverflow) {
  const Patterns& p = GetParam();
  std::vector<uint32_t> bits(kCount, p.max_finite);
  StepRecord r = decide(p.fmt, bits, 1);
  EXPECT_EQ(r.overflow, 0u) << format_name(p.fmt);
  EXPECT_EQ(r.skipped, 0u) << format_name(p.fmt);
}

// The norm itself: gradients 3 * 2^90 and 4 * 2^90 at scale 2^100 have the
// unscaled norm 5 * 2^-10 (their squares, 2^180, are far past fp32).
TEST_P(OverflowDetection, NormOfLargeScaledGradientsIsExact) {
  const Patterns& p = GetParam();
  if (p.fmt == Format::F16 || p.fmt == Format::CB16) GTEST_SKIP() << "2^91 is beyond " << format_name(p.fmt);
  std::vector<float> v(kCount, 0.0f);
  v[10] = std::ldexp(3.0f, 90);
  v[2500] = -std::ldexp(4.0f, 90);
  auto packed = pack(p.fmt, v);
  size_t eb = format_bytes(p.fmt);
  std::vector<uint32_t> bits(kCount, 0);
  for (uint32_t i = 0; i < kCount; ++i) std::memcpy(&bits[i], &packed[i * eb], eb);
  StepRecord r = decide(p.fmt, bits, std::ldexp(1.0f, 100));
  EXPECT_EQ(r.overflow, 0u);
  EXPECT_NEAR(r.grad_norm, 5.0 / 1024, 5.0 / 1024 * 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Formats, OverflowDetection, ::testing::ValuesIn(kPatterns),
                         [](const auto& info) { return std::string(format_name(info.param.fmt)); });

class LargeScale : public GpuTestP<Format> {};

// A static loss scale of 2^100 in bf16 (range 3.4e38) and fp32: the scaled
// gradients are finite (about 2^100 x 0.1), so no step may be called an
// overflow; the old sum of v*v overflowed fp32 and skipped every step.
TEST_P(LargeScale, FiniteGradientsAtScale2To100AreNeverSkipped) {
  config::TrainConfig c;
  c.precision = GetParam();
  c.batch = 8;
  c.epochs = 2;
  c.seed = 3;
  c.optimizer.lr = 0.1;
  c.optimizer.momentum = 0;
  c.scaler.histogram_interval = 0;
  c.scaler.mode = config::LossScaleMode::Static;
  c.scaler.initial_loss_scale = 0x1p100;
  c.clip.max_norm = 0.5;  // the clip path sees the unscaled norm
  auto data = data::HostData::classification(data::make_classification(64, 6, 3, 5));
  train::Trainer t(ctx(), c, models::parse_model("6-5t-3"), train::LossKind::SoftmaxXent, data);
  std::vector<train::StepMetrics> steps;
  t.on_step = [&](const train::StepMetrics& m) { steps.push_back(m); };
  train::TrainSummary s = t.run();
  EXPECT_FALSE(s.failed) << s.failure;
  EXPECT_EQ(s.skipped, 0u);
  EXPECT_EQ(s.overflows, 0u);
  ASSERT_EQ(steps.size(), 16u);
  for (auto& m : steps) {
    EXPECT_TRUE(std::isfinite(m.grad_norm) && m.grad_norm > 0 && m.grad_norm < 100) << m.step << ": " << m.grad_norm;
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, LargeScale, ::testing::Values(Format::BF16, Format::F32),
                         [](const auto& info) { return std::string(format_name(info.param)); });

}  // namespace
}  // namespace vkamp::test
