// What the gradient histogram says about a format: where its flush-to-zero,
// subnormal and overflow edges fall on the unscaled axis at each loss
// scale, which bins count as lost, whether the zero bar can hold flushed
// values, and the command line's names on the studio's controls.
#include <gtest/gtest.h>

#include <cmath>

#include "histogram_bands.hpp"
#include "setting_labels.hpp"
#include "vkamp/error.hpp"
#include "vkamp/train/gpu_state.hpp"

namespace vkamp::test {
namespace {

using train::kHistMinExp;

// The bin of [2^e, 2^(e+1)).
size_t bin(int e) { return size_t(e - kHistMinExp); }

TEST(FormatBands, Fp16EdgesMoveLeftAsTheScaleGrows) {
  // fp16: smallest subnormal 2^-24 (values <= half of it round to 0),
  // smallest normal 2^-14, largest 65504.
  ui::FormatBands one = ui::format_bands(Format::F16, 1);
  EXPECT_EQ(one.flush_at, -25.0);
  EXPECT_EQ(one.normal_from, -14.0);
  EXPECT_DOUBLE_EQ(one.overflow_above, std::log2(65504.0));
  for (int k : {-3, 0, 7, 13, 16, 24}) {
    ui::FormatBands b = ui::format_bands(Format::F16, std::ldexp(1.0, k));
    EXPECT_EQ(b.scale_log2, k);
    EXPECT_EQ(b.flush_at, -25.0 - k) << "at 2^" << k;
    EXPECT_EQ(b.normal_from, -14.0 - k) << "at 2^" << k;
    EXPECT_DOUBLE_EQ(b.overflow_above, std::log2(65504.0) - k) << "at 2^" << k;
  }
  // A scale that is not a power of two moves them by its log2 too.
  EXPECT_DOUBLE_EQ(ui::format_bands(Format::F16, 1000).flush_at, -25 - std::log2(1000.0));
}

TEST(FormatBands, EachFormatHasItsOwnEdges) {
  EXPECT_EQ(ui::format_bands(Format::BF16, 1).flush_at, -134.0);
  EXPECT_EQ(ui::format_bands(Format::BF16, 1).normal_from, -126.0);
  EXPECT_EQ(ui::format_bands(Format::CB16, 1).flush_at, -40.0);  // 1-6-9, bias 31: subnormals from 2^-39
  EXPECT_EQ(ui::format_bands(Format::CB16, 1).normal_from, -30.0);
  EXPECT_EQ(ui::format_bands(Format::F32, 1).flush_at, -150.0);
  // An fp32 run's histogram shows what fp16 would do; the 16-bit runs their own format.
  EXPECT_EQ(ui::band_format(Format::F32), Format::F16);
  EXPECT_EQ(ui::band_format(Format::BF16), Format::BF16);
  EXPECT_EQ(ui::band_format(Format::CB16), Format::CB16);
}

TEST(FormatBands, OnlyFormatsThatFlushInsideTheHistogramMixFlushesIntoZeros) {
  EXPECT_TRUE(ui::zeros_may_include_flushes(Format::F16));
  EXPECT_TRUE(ui::zeros_may_include_flushes(Format::CB16));
  EXPECT_FALSE(ui::zeros_may_include_flushes(Format::BF16));
  EXPECT_FALSE(ui::zeros_may_include_flushes(Format::F32));
}

TEST(HistogramFractions, CountWhatFp16LosesWithAndWithoutTheScale) {
  train::TensorHistogram t;
  t.loss_scale = 1024;    // 2^10: flushes |g| <= 2^-35
  t.bins[bin(-30)] = 10;  // lost unscaled, kept at 2^10
  t.bins[bin(-36)] = 5;   // [2^-36, 2^-35): lost either way
  t.bins[bin(-10)] = 20;  // fine
  t.bins[bin(6)] = 4;     // [64, 128) x 1024 > 65504: overflows scaled
  t.bins[train::kHistZero] = 1;
  ui::HistogramFractions f = ui::fractions(t);
  EXPECT_EQ(f.total, 40.0);
  EXPECT_DOUBLE_EQ(f.underflow_unscaled, 15.0 / 40);
  EXPECT_DOUBLE_EQ(f.underflow_scaled, 5.0 / 40);
  EXPECT_DOUBLE_EQ(f.overflow_scaled, 4.0 / 40);
  EXPECT_DOUBLE_EQ(f.zero, 1.0 / 40);
}

TEST(HistogramFractions, TheBinJustBelowTheSmallestSubnormalRoundsUpAndIsKept) {
  // fp16 rounds (2^-25, 2^-24) up to 2^-24: only the bins wholly at or
  // below 2^-25 flush.
  train::TensorHistogram t;
  t.loss_scale = 1;
  t.bins[bin(-25)] = 3;
  t.bins[bin(-26)] = 7;
  ui::HistogramFractions f = ui::fractions(t, Format::F16);
  EXPECT_DOUBLE_EQ(f.underflow_unscaled, 0.7);
  EXPECT_DOUBLE_EQ(f.underflow_scaled, 0.7);
}

TEST(HistogramFractions, Bf16LosesNothingTheHistogramCanSee) {
  train::TensorHistogram t;
  t.loss_scale = 1024;
  t.bins[0] = 5;  // everything below 2^-39
  t.bins[bin(-20)] = 5;
  ui::HistogramFractions f = ui::fractions(t, Format::BF16);
  EXPECT_EQ(f.underflow_unscaled, 0.0);
  EXPECT_EQ(f.underflow_scaled, 0.0);
  EXPECT_EQ(f.overflow_scaled, 0.0);
  // The same bins read as fp16 at 2^10 (flushing |g| <= 2^-35): bin 0 is lost either way.
  EXPECT_DOUBLE_EQ(ui::fractions(t, Format::F16).underflow_scaled, 0.5);
}

TEST(HistogramFractions, CombinedAddsTheTensorsBins) {
  train::TensorHistogram a, b;
  a.step = b.step = 40;
  a.loss_scale = b.loss_scale = 8192;
  a.bins[bin(-30)] = 2;
  b.bins[bin(-30)] = 3;
  b.bins[train::kHistZero] = 5;
  train::TensorHistogram all = ui::combined({a, b});
  EXPECT_EQ(all.step, 40u);
  EXPECT_EQ(all.loss_scale, 8192.0f);
  EXPECT_EQ(all.bins[bin(-30)], 5u);
  EXPECT_EQ(all.bins[train::kHistZero], 5u);
  EXPECT_EQ(ui::combined({}).bins[train::kHistZero], 0u);
}

TEST(Pow2Label, WholeAndFractionalExponents) {
  EXPECT_EQ(ui::pow2_label(-38), "2^-38");
  EXPECT_EQ(ui::pow2_label(0), "2^0");
  EXPECT_EQ(ui::pow2_label(-34.9657), "2^-35.0");
  EXPECT_EQ(ui::pow2_label(15.5), "2^15.5");
}

TEST(SettingLabels, ControlsUseTheFlagsOfTheCommandLine) {
  EXPECT_EQ(ui::setting_label("steps_per_increase"), "--steps-per-increase");
  EXPECT_EQ(ui::setting_label("growth_interval"), "--steps-per-increase");  // PyTorch's name, an alias
  EXPECT_EQ(ui::setting_label("min_loss_scale"), "--min-loss-scale");
  EXPECT_EQ(ui::setting_label("max_loss_scale"), "--max-loss-scale");
  EXPECT_EQ(ui::setting_label("initial_loss_scale"), "--initial-loss-scale");
  EXPECT_EQ(ui::setting_label("fail_after_overflows"), "--fail-after-overflows");
  EXPECT_EQ(ui::setting_label("loss_scaling_factor"), "--loss-scale");
  const std::string tip = ui::setting_tooltip("steps_per_increase");
  EXPECT_EQ(tip.rfind("--steps-per-increase N: ", 0), 0u) << tip;
  EXPECT_NE(tip.find("clean steps before the scale grows"), std::string::npos) << tip;
  EXPECT_NE(tip.find("steps_per_increase, also growth_interval"), std::string::npos) << tip;
  EXPECT_THROW(ui::setting_label("growth interval"), Error);
}

}  // namespace
}  // namespace vkamp::test
