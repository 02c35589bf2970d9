// The underflow accounting of amp_check.comp (TensorStats) against a CPU
// count in double: per tensor, the zeros, the subnormals of the format, the
// values the loss scale is saving (|v| / S at or below half the smallest
// subnormal, so they would round to zero unscaled) and the largest finite
// |v|. First run directly on random bit patterns with the edges crafted in,
// over tensors that straddle amp_check's workgroup chunks with padding
// between them; then through the Trainer, whose every step must report the
// counts of the gradients it left in the buffer. The counts are exact: they
// compare bit patterns, with no rounding to bound.
#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "amp_pass.hpp"
#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "tiny_model.hpp"
#include "vkamp/train/trainer.hpp"
#include "vkamp/train/underflow.hpp"

namespace vkamp::test {
namespace {

using train::TensorStats;

// The CPU count of one tensor's stored gradients (decoded exactly).
TensorStats count(Format fmt, const std::vector<float>& v, uint32_t begin, uint32_t end, double scale) {
  TensorStats s{};
  const double lost_edge = format_min_subnormal(fmt) / 2 * scale, min_normal = format_min_normal(fmt);
  float max_abs = 0;
  for (uint32_t i = begin; i < end; ++i) {
    const double a = std::fabs(double(v[i]));
    if (!std::isfinite(a)) {
      ++s.nonfinite;
      continue;
    }
    max_abs = std::max(max_abs, float(a));
    if (a == 0) {
      ++s.zeros;
      continue;
    }
    if (a < min_normal) ++s.subnormal;
    if (a <= lost_edge) ++s.lost_unscaled;
  }
  s.max_abs_bits = std::bit_cast<uint32_t>(max_abs);
  return s;
}

void expect_same(const TensorStats& gpu, const TensorStats& cpu, const std::string& what) {
  EXPECT_EQ(gpu.zeros, cpu.zeros) << what;
  EXPECT_EQ(gpu.subnormal, cpu.subnormal) << what;
  EXPECT_EQ(gpu.lost_unscaled, cpu.lost_unscaled) << what;
  EXPECT_EQ(gpu.nonfinite, cpu.nonfinite) << what;
  EXPECT_EQ(gpu.max_abs_bits, cpu.max_abs_bits) << what << ": " << std::bit_cast<float>(gpu.max_abs_bits) << " vs "
                                                << std::bit_cast<float>(cpu.max_abs_bits);
}

// Bit patterns of fmt's storage: random over every pattern (so every
// binade, both signs, the subnormals, inf and NaN), then the edges at
// `scale` written in at random places: +-0, the smallest subnormal and
// normal, the largest subnormal, and the patterns on and next to the flush
// edge min_subnormal / 2 * scale.
std::vector<uint32_t> crafted(Format fmt, uint32_t n, double scale) {
  const bool wide = fmt == Format::F32;
  std::vector<uint32_t> bits(n);
  for (auto& b : bits) b = wide ? uint32_t(rng()()) : uint32_t(rng()() & 0xFFFFu);  // rng(): numerics.hpp
  auto pattern = [&](double x) {
    float f = float(x);
    auto packed = pack(fmt, std::span<const float>(&f, 1));
    uint32_t b = 0;
    std::memcpy(&b, packed.data(), packed.size());
    return b;
  };
  const uint32_t sign = wide ? 0x80000000u : 0x8000u;
  const uint32_t min_normal = pattern(format_min_normal(fmt));
  std::vector<uint32_t> edges{0, sign, 1, min_normal, min_normal - 1, min_normal | sign};
  const double edge = format_min_subnormal(fmt) / 2 * scale;
  if (edge < format_max(fmt)) {
    const uint32_t e = pattern(edge);
    for (uint32_t b : {e, e + 1, e - 1, e | sign})
      if (b != uint32_t(-1)) edges.push_back(b);
  }
  std::uniform_int_distribution<uint32_t> at(0, n - 1);  // rng(): numerics.hpp
  for (int copies = 0; copies < 3; ++copies)
    for (uint32_t b : edges) bits[at(rng())] = b;
  return bits;
}

class UnderflowAccounting : public GpuTestP<Format> {};
class UnderflowAccountingPerLayer : public GpuTest {};

TEST_P(UnderflowAccounting, CountsMatchACpuCountPerTensor) {
  const Format fmt = GetParam();
  const uint32_t n = 10000;
  // Five tensors with padding between two of them; with 3 workgroups each
  // reads a chunk of 3584, so two tensors span two chunks each.
  const std::vector<uint32_t> ranges{0, 1, 1, 8, 16, 2000, 2000, 7000, 7100, 10000};
  for (double scale : {1.0, 1024.0, 1000.0, 0.125, 65536.0}) {
    const auto bits = crafted(fmt, n, scale);
    std::vector<uint8_t> raw(n * format_bytes(fmt));
    for (uint32_t i = 0; i < n; ++i) std::memcpy(&raw[i * format_bytes(fmt)], &bits[i], format_bytes(fmt));
    const std::vector<float> v = unpack(fmt, raw);
    const AmpPassResult r = run_amp_pass(fmt, bits, float(scale), ranges, 3);
    TensorStats total{};
    float total_max = 0;
    for (size_t t = 0; t < r.stats.size(); ++t) {
      const TensorStats cpu = count(fmt, v, ranges[2 * t], ranges[2 * t + 1], scale);
      expect_same(r.stats[t], cpu, std::string(format_name(fmt)) + " scale " + std::to_string(scale) + " tensor " +
                                       std::to_string(t));
      total.zeros += cpu.zeros;
      total.subnormal += cpu.subnormal;
      total.lost_unscaled += cpu.lost_unscaled;
      total_max = std::max(total_max, std::bit_cast<float>(cpu.max_abs_bits));
    }
    EXPECT_EQ(r.record.zeros, total.zeros);
    EXPECT_EQ(r.record.subnormal, total.subnormal);
    EXPECT_EQ(r.record.lost_unscaled, total.lost_unscaled);
    EXPECT_EQ(r.record.max_abs_bits, std::bit_cast<uint32_t>(total_max));
  }
}

// Padding belongs to no tensor: an inf there is still an overflow of the
// step, but no tensor's statistics count it.
TEST_P(UnderflowAccounting, PaddingIsCheckedButCountedInNoTensor) {
  const Format fmt = GetParam();
  const uint32_t n = 5000;
  std::vector<float> v(n, 0.5f);
  v[1500] = INFINITY;  // in the gap [1000, 2000)
  v[1600] = 0;
  auto packed = pack(fmt, v);
  std::vector<uint32_t> bits(n, 0);
  for (uint32_t i = 0; i < n; ++i) std::memcpy(&bits[i], &packed[i * format_bytes(fmt)], format_bytes(fmt));
  const AmpPassResult r = run_amp_pass(fmt, bits, 1, {0, 1000, 2000, 5000}, 2);
  EXPECT_EQ(r.record.overflow, 1u);
  for (const TensorStats& s : r.stats) {
    EXPECT_EQ(s.nonfinite, 0u);
    EXPECT_EQ(s.zeros, 0u);
    EXPECT_EQ(std::bit_cast<float>(s.max_abs_bits), 0.5f);
  }
}

// Every step of a run reports the counts of the gradients it left behind,
// at the scale it ran with: per tensor (on_tensor_underflow) and in total
// (StepMetrics). A modest scale in the 16-bit formats puts gradients in the
// subnormals and below the flush edge.
TEST_P(UnderflowAccounting, TrainerReportsEveryStepsCounts) {
  const Format fmt = GetParam();
  auto data = one_batch_classification(16, 6, 3, 41);
  for (uint32_t r = 0; r < data.count; ++r) data.x[r * data.features] = 0;  // fc1.weight[:, 0] gets exact zeros
  config::TrainConfig c;
  c.precision = fmt;
  c.batch = 8;
  c.epochs = 3;
  c.seed = 4;
  c.optimizer.lr = 0.1;
  // Gradients of about 1e-2 land a hundred times above the smallest normal.
  c.scaler.initial_loss_scale = format_min_normal(fmt) * 1e4;
  c.scaler.min_loss_scale = c.scaler.initial_loss_scale;
  c.scaler.steps_per_increase = 1000;
  train::Trainer t(ctx(), c, models::parse_model("6-8r-3"), train::LossKind::SoftmaxXent, data);
  std::vector<train::StepMetrics> steps;
  std::vector<train::TensorUnderflow> per_tensor;
  t.on_step = [&](const train::StepMetrics& m) { steps.push_back(m); };
  t.on_tensor_underflow = [&](const train::TensorUnderflow& u) { per_tensor.push_back(u); };
  const auto& tensors = t.model().tensors();
  t.start();
  uint32_t subnormal = 0;
  for (uint32_t s = 0; s < 4; ++s) {
    ASSERT_TRUE(t.advance());
    t.sync();
    ASSERT_EQ(steps.size(), s + 1);
    ASSERT_EQ(per_tensor.size(), s + 1);
    ASSERT_EQ(per_tensor[s].stats.size(), tensors.size());
    EXPECT_EQ(per_tensor[s].step, s);
    const auto g = download(t.model().grads(), c.precision, t.model().param_elements());
    TensorStats total{};
    float total_max = 0;
    for (size_t k = 0; k < tensors.size(); ++k) {
      const TensorStats cpu = count(fmt, g, tensors[k].offset, tensors[k].offset + tensors[k].size, steps[s].loss_scale);
      expect_same(per_tensor[s].stats[k], cpu, "step " + std::to_string(s) + " " + tensors[k].name);
      total.zeros += cpu.zeros;
      total.subnormal += cpu.subnormal;
      total.lost_unscaled += cpu.lost_unscaled;
      total_max = std::max(total_max, std::bit_cast<float>(cpu.max_abs_bits));
    }
    EXPECT_EQ(steps[s].zeros, total.zeros);
    EXPECT_EQ(steps[s].subnormal, total.subnormal);
    EXPECT_EQ(steps[s].lost_unscaled, total.lost_unscaled);
    EXPECT_EQ(steps[s].max_abs_grad, total_max);
    subnormal += total.subnormal;
  }
  t.finish();
  // bf16's subnormals are fp32's, which a driver may flush in the fp32
  // arithmetic that produces them (NVIDIA's does): only fp16's and cb16's
  // are sure to be reached.
  if (fmt == Format::F16 || fmt == Format::CB16) {
    EXPECT_GT(subnormal, 0u) << "the scale was meant to put gradients in the subnormals";
  }
}

// --loss-scale per-layer: each tensor's gradients carry its own layer's
// scale, so each tensor is counted at that scale, and the norm unscales
// each by its own (fixed power-of-two scales, far apart, so that one
// scale for all would count differently).
TEST_F(UnderflowAccountingPerLayer, EachTensorIsCountedAtItsLayersScale) {
  auto data = one_batch_classification(16, 6, 4, 43);
  for (float& x : data.x) x *= 1e-6f;  // fc1.weight's gradients about 1e-8: below fp16's flush edge unscaled
  config::TrainConfig c;
  c.precision = Format::F16;
  c.batch = 8;
  c.epochs = 3;
  c.seed = 4;
  c.optimizer.lr = 0.1;
  c.scaler.mode = config::LossScaleMode::PerLayer;
  const std::vector<double> scales{0x1p14, 0x1p-6, 1.0};  // fc1, fc2, fc3 (the output layer)
  c.scaler.fixed_layer_scales = scales;
  train::Trainer t(ctx(), c, models::parse_model("6-8t-8t-4"), train::LossKind::SoftmaxXent, data);
  std::vector<train::StepMetrics> steps;
  std::vector<train::TensorUnderflow> per_tensor;
  t.on_step = [&](const train::StepMetrics& m) { steps.push_back(m); };
  t.on_tensor_underflow = [&](const train::TensorUnderflow& u) { per_tensor.push_back(u); };
  const auto& tensors = t.model().tensors();
  auto scale_of = [&](const std::string& name) { return scales.at(size_t(name[2] - '1')); };  // "fcN."
  t.start();
  uint32_t lost = 0;
  for (uint32_t s = 0; s < 3; ++s) {
    ASSERT_TRUE(t.advance());
    t.sync();
    ASSERT_EQ(per_tensor.size(), s + 1);
    const auto g = download(t.model().grads(), c.precision, t.model().param_elements());
    double sumsq = 0;
    for (size_t k = 0; k < tensors.size(); ++k) {
      const double scale = scale_of(tensors[k].name);
      const uint32_t begin = tensors[k].offset, end = begin + tensors[k].size;
      expect_same(per_tensor[s].stats[k], count(Format::F16, g, begin, end, scale),
                  "step " + std::to_string(s) + " " + tensors[k].name);
      lost += per_tensor[s].stats[k].lost_unscaled;
      for (uint32_t i = begin; i < end; ++i) sumsq += (g[i] / scale) * (g[i] / scale);
    }
    // fp32 sums of squares in another order: a few ulps of fp32.
    EXPECT_NEAR(steps[s].grad_norm, std::sqrt(sumsq), 1e-5 * std::sqrt(sumsq)) << "step " << s;
  }
  t.finish();
  EXPECT_GT(lost, 0u) << "fc1's scale of 2^14 was meant to keep gradients that would flush unscaled";
}

INSTANTIATE_TEST_SUITE_P(Formats, UnderflowAccounting,
                         ::testing::Values(Format::F32, Format::F16, Format::BF16, Format::CB16),
                         [](const auto& info) { return std::string(format_name(info.param)); });

// The headroom against doubling by hand, across binades and at the edges.
TEST(Headroom, IsTheLastDoublingThatStaysWithinTheFormat) {
  for (Format fmt : kAllFormats) {
    const double max = format_max(fmt);
    std::uniform_real_distribution<double> e(-140, 40);
    for (int i = 0; i < 2000; ++i) {
      const float m = float(std::exp2(e(rng())));
      if (!(m > 0) || !std::isfinite(m)) continue;
      int k = -200;
      while (std::ldexp(double(m), k + 1) <= max) ++k;
      EXPECT_EQ(train::headroom_doublings(fmt, m), k) << format_name(fmt) << " " << m;
    }
    EXPECT_EQ(train::headroom_doublings(fmt, float(max)), 0) << format_name(fmt);
    EXPECT_EQ(train::headroom_doublings(fmt, 0.0f), std::nullopt);
    EXPECT_EQ(train::headroom_doublings(fmt, INFINITY), std::nullopt);
  }
  EXPECT_EQ(train::headroom_doublings(Format::F16, 65505.0f), -1) << "past the largest fp16 value";
  EXPECT_EQ(train::headroom_doublings(Format::F16, 1.0f), 15);
}

}  // namespace
}  // namespace vkamp::test
