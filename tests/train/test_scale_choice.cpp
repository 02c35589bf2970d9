// The loss-scale chooser (gpu_abi/scale_choice.h, shared with step_control.comp)
// against a plain CPU reference in double that walks every candidate scale
// and decides from the format's limits themselves (format_min_subnormal,
// format_max), on crafted and random histograms; the suggestion built from
// it per tensor (scale_suggestion.hpp), and its YAML line read back by the
// --config reader.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <vector>

#include "vkamp/config/train_config.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/train/gpu_state.hpp"
#include "vkamp/train/scale_suggestion.hpp"
#include "vkamp/train/step_params.hpp"

namespace vkamp::test {
namespace {

using train::kHistLogBins;
using train::kHistMinExp;

struct Reference {
  int exp = 0;
  bool met = false;
  double underflow = 0;
  int headroom = 0;
};

// Bin b holds [2^e, 2^(e+1)), e = kHistMinExp + b. At S = 2^k the whole bin
// underflows (flushes to zero or is stored subnormal) when its top, scaled,
// is at most the smallest normal; it cannot overflow when its top, scaled, is at most the
// largest power of two below the format's maximum (2^(e+1+k) <= 2^floor(log2 max)).
Reference reference(const std::vector<double>& counts, double total, Format f, int k_lo, int k_hi, double target) {
  const double min_normal = format_min_normal(f), safe_top = std::exp2(std::floor(std::log2(format_max(f))));
  auto underflow = [&](int k) {
    double u = 0;
    for (int b = 0; b < kHistLogBins; ++b)
      if (std::ldexp(1.0, kHistMinExp + b + 1 + k) <= min_normal) u += counts[b];
    return total > 0 ? u / total : 0;
  };
  int top = -1;
  for (int b = 0; b < kHistLogBins; ++b)
    if (counts[b] > 0) top = b;
  // Doublings of S left before the top bin may pass the format's maximum
  // (negative: it may already).
  auto headroom = [&](int k) {
    if (top < 0) return 1000;
    int h = -300;
    while (std::ldexp(1.0, kHistMinExp + top + 1 + k + h + 1) <= safe_top) ++h;
    return h;
  };
  Reference r;
  // Every candidate: the most headroom among those meeting the target.
  bool found = false;
  for (int k = k_lo; k <= k_hi; ++k)
    if (headroom(k) >= 0 && underflow(k) <= target && (!found || headroom(k) > r.headroom)) {
      r = {k, true, underflow(k), headroom(k)};
      found = true;
    }
  if (!found) {
    // The least underflow without overflow, then the most headroom.
    for (int k = k_lo; k <= k_hi; ++k)
      if (headroom(k) >= 0 &&
          (!found || underflow(k) < r.underflow || (underflow(k) == r.underflow && headroom(k) > r.headroom))) {
        r = {k, false, underflow(k), headroom(k)};
        found = true;
      }
  }
  if (!found) r = {k_lo, false, underflow(k_lo), headroom(k_lo)};
  return r;
}

train::ScaleChoice choose(const std::vector<double>& counts, double total, Format f, int k_lo, int k_hi,
                          double target) {
  float c[kHistLogBins];
  for (int b = 0; b < kHistLogBins; ++b) c[b] = float(counts[b]);
  const train::FormatExponents fe = train::format_exponents(f);
  return train::choose_scale(c, float(total), fe.normal_exp, fe.top_exp, k_lo, k_hi, float(target));
}

void expect_same(const std::vector<double>& counts, double total, Format f, int k_lo, int k_hi, double target,
                 const std::string& what) {
  const Reference want = reference(counts, total, f, k_lo, k_hi, target);
  const train::ScaleChoice got = choose(counts, total, f, k_lo, k_hi, target);
  EXPECT_EQ(got.exp, want.exp) << what;
  EXPECT_EQ(got.met != 0, want.met) << what;
  EXPECT_EQ(got.headroom, want.headroom) << what;
  EXPECT_NEAR(got.underflow, want.underflow, 1e-6) << what;
}

std::vector<double> bins_at(std::initializer_list<std::pair<int, double>> exp_counts) {
  std::vector<double> c(kHistLogBins, 0);
  for (auto [e, n] : exp_counts) c[e - kHistMinExp] += n;
  return c;
}

TEST(ScaleChoice, FormatExponentsAreTheFormatsLimits) {
  EXPECT_EQ(train::format_exponents(Format::F16).sub_exp, -24);
  EXPECT_EQ(train::format_exponents(Format::F16).normal_exp, -14);
  EXPECT_EQ(train::format_exponents(Format::BF16).normal_exp, -126);
  EXPECT_EQ(train::format_exponents(Format::F16).top_exp, 15);
  EXPECT_EQ(train::format_exponents(Format::BF16).sub_exp, -133);
  EXPECT_EQ(train::format_exponents(Format::BF16).top_exp, 127);
  EXPECT_EQ(train::format_exponents(Format::F32).sub_exp, -149);
  for (Format f : kAllFormats) {
    const train::FormatExponents fe = train::format_exponents(f);
    EXPECT_EQ(std::ldexp(1.0, fe.sub_exp), format_min_subnormal(f)) << format_name(f);
    EXPECT_EQ(std::ldexp(1.0, fe.normal_exp), format_min_normal(f)) << format_name(f);
    EXPECT_LE(std::ldexp(1.0, fe.top_exp), format_max(f)) << format_name(f);
    EXPECT_GT(std::ldexp(1.0, fe.top_exp + 1), format_max(f)) << format_name(f);
  }
}

// fp16: gradients from 2^-30 to 2^-3. Scaled by 2^k, bin e lies below the
// smallest normal 2^-14 (subnormal or flushed: both underflow) when
// e + 1 + k <= -14. 10 of 10000 (0.1%) sit at 2^-30, the rest at 2^-20 and
// above.
TEST(ScaleChoice, CraftedFp16PicksTheSmallestScaleThatMeetsTheTarget) {
  const auto c = bins_at({{-30, 10}, {-20, 990}, {-10, 8000}, {-3, 1000}});
  const double total = 10000;
  // 0.1% allowed: the 2^-30 bin may underflow, 2^-20 may not: it does
  // when k <= 5, so k = 6, headroom 15 - 1 - (-3) - 6 = 11.
  auto r = choose(c, total, Format::F16, -126, 127, 0.001);
  EXPECT_EQ(r.exp, 6);
  EXPECT_EQ(r.headroom, 11);
  EXPECT_TRUE(r.met);
  EXPECT_NEAR(r.underflow, 0.001, 1e-9);
  // At 2^5 the 2^-20 bin is subnormal: a choice that counted only what
  // flushes to zero would take it (and fp16's 2^-25 .. 2^-15 with it).
  EXPECT_GT(choose(c, total, Format::F16, -126, 5, 0.001).underflow, 0.09);
  // Nothing may underflow: 2^-30 needs k >= 16.
  r = choose(c, total, Format::F16, -126, 127, 0);
  EXPECT_EQ(r.exp, 16);
  EXPECT_EQ(r.headroom, 1);
  // The range starts at min_loss_scale 2^8: k = 8.
  r = choose(c, total, Format::F16, 8, 127, 0.001);
  EXPECT_EQ(r.exp, 8);
  expect_same(c, total, Format::F16, -126, 127, 0.001, "crafted");
  expect_same(c, total, Format::F16, -126, 127, 0, "crafted, target 0");
}

TEST(ScaleChoice, WhenNoScaleMeetsTheTargetTheLeastUnderflowWithoutOverflow) {
  // 2^-30, 2^-20 and 2^14: no underflow needs k >= 16, but 2^14
  // overflows above k = 0. Up to k = 0 both low bins underflow (2^-20
  // stays normal only from k = 6), the same share at every k in [-10, 0];
  // of those, -10 has the most headroom.
  const auto c = bins_at({{-30, 500}, {-20, 100}, {14, 500}});
  const auto r = choose(c, 1100, Format::F16, -10, 20, 0.001);
  EXPECT_EQ(r.exp, -10);
  EXPECT_FALSE(r.met);
  EXPECT_EQ(r.headroom, 10);
  EXPECT_NEAR(r.underflow, 600.0 / 1100, 1e-6);
  expect_same(c, 1100, Format::F16, -10, 20, 0.001, "conflicting");
  // Even the smallest allowed scale overflows: that one, not met.
  const auto over = choose(c, 1100, Format::F16, 3, 20, 0.001);
  EXPECT_EQ(over.exp, 3);
  EXPECT_FALSE(over.met);
  EXPECT_LT(over.headroom, 0);
  expect_same(c, 1100, Format::F16, 3, 20, 0.001, "overflowing");
}

TEST(ScaleChoice, NoNonzeroGradientTakesTheSmallestScale) {
  std::vector<double> c(kHistLogBins, 0);
  const auto r = choose(c, 100, Format::F16, -2, 30, 0.001);
  EXPECT_EQ(r.exp, -2);
  EXPECT_TRUE(r.met);
  EXPECT_EQ(r.underflow, 0);
}

// Random histograms, formats, ranges and targets: dyadic targets and
// counts below 2^24 so that float and double hold them exactly.
TEST(ScaleChoice, RandomHistogramsMatchTheReference) {
  std::mt19937 rng(24);
  const Format formats[] = {Format::F16, Format::BF16, Format::CB16, Format::F32};
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<double> c(kHistLogBins, 0);
    const int lo_bin = int(rng() % kHistLogBins), span = 1 + int(rng() % 20);
    double total = 0;
    for (int b = lo_bin; b < std::min<int>(kHistLogBins, lo_bin + span); ++b) {
      c[b] = rng() % 4 == 0 ? 0 : double(rng() % 4096);
      total += c[b];
    }
    total += double(rng() % 1000);  // zeros, inf, NaN: counted, never in a log bin
    const Format f = formats[rng() % 4];
    const int k_lo = -40 + int(rng() % 60), k_hi = k_lo + int(rng() % 80);
    const double target = double(rng() % 64) / 1024;
    expect_same(c, total, f, k_lo, k_hi, target,
                "trial " + std::to_string(trial) + " " + format_name(f) + " k in [" + std::to_string(k_lo) + ", " +
                    std::to_string(k_hi) + "] target " + std::to_string(target));
    if (HasFailure()) return;
  }
}

train::TensorHistogram histogram(uint32_t step, const std::string& name,
                                 std::initializer_list<std::pair<int, uint32_t>> exp_counts, uint32_t zeros = 0) {
  train::TensorHistogram h;
  h.step = step;
  h.tensor = name;
  h.loss_scale = 65536;
  for (auto [e, n] : exp_counts) h.bins[e - kHistMinExp] += n;
  h.bins[train::kHistZero] = zeros;
  return h;
}

TEST(ScaleSuggestion, PerTensorHeadroomAndUnderflowAtTheChosenScale) {
  train::ScaleSuggester s;
  for (uint32_t step = 0; step < 2; ++step) {
    s.add(histogram(step, "fc1.weight", {{-30, 1}, {-12, 499}}));
    s.add(histogram(step, "fc1.bias", {{-4, 10}}, 10));
  }
  config::ScalerConfig sc;  // min_loss_scale 1: k >= 0
  sc.underflow_target = 0.001;
  const train::ScaleSuggestion r = s.suggest(Format::F16, sc);
  EXPECT_EQ(r.histograms, 2u);
  // 2 of 1040 at 2^-30 (0.19%): more than 0.1%, so 2^-30 must stay
  // normal in fp16 (2^-30 * 2^k >= 2^-14): k >= 16.
  EXPECT_EQ(r.exp, 16);
  EXPECT_TRUE(r.met);
  EXPECT_EQ(r.scale(), 65536.0);
  ASSERT_EQ(r.tensors.size(), 2u);
  EXPECT_EQ(r.tensors[0].tensor, "fc1.weight");
  EXPECT_EQ(r.tensors[0].elements, 500) << "one step's elements, not the sum over the 2 steps";
  EXPECT_EQ(r.tensors[0].headroom, 15 - 1 - (-12) - 16);
  EXPECT_EQ(r.tensors[0].underflow, 0);
  EXPECT_EQ(r.tensors[1].headroom, 15 - 1 - (-4) - 16);
  EXPECT_EQ(r.tensors[1].elements, 20);
  EXPECT_EQ(r.headroom, std::min(r.tensors[0].headroom, r.tensors[1].headroom));
  const std::string text = train::suggestion_text(r, Format::F16, sc.underflow_target);
  EXPECT_NE(text.find("suggested scale 2^16 = 65536"), std::string::npos) << text;
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(\n  fc1.weight +500 )"))) << text;
  EXPECT_NE(text.find("fc1.bias"), std::string::npos) << text;
  EXPECT_NE(text.find("loss_scaling_factor: 65536\n"), std::string::npos) << text;
}

// Only the first suggest_steps steps count, as only auto's warm-up window
// counts for its first choice: a later step's gradients, here far smaller,
// change nothing.
TEST(ScaleSuggestion, OnlyTheStepsBeforeSuggestStepsCount) {
  train::ScaleSuggester s;
  s.add(histogram(0, "w", {{-10, 100}}));
  s.add(histogram(10, "w", {{-10, 100}}));
  s.add(histogram(20, "w", {{-35, 100}}));
  config::ScalerConfig sc;
  sc.suggest_steps = 20;
  const train::ScaleSuggestion first = s.suggest(Format::F16, sc);
  EXPECT_EQ(first.histograms, 2u);
  EXPECT_EQ(first.window, 20u);
  EXPECT_EQ(first.exp, 0) << "2^-10 is normal at 2^0";
  sc.suggest_steps = 21;
  const train::ScaleSuggestion all = s.suggest(Format::F16, sc);
  EXPECT_EQ(all.histograms, 3u);
  EXPECT_EQ(all.exp, 21) << "2^-35 is normal in fp16 from 2^21 on";
}

// The YAML line loads with the --config reader as a static scale, exactly,
// also for a scale below 1.
TEST(ScaleSuggestion, YamlLineRoundTripsThroughTheConfigReader) {
  for (int exp : {6, -7, 20}) {
    train::ScaleSuggestion r;
    r.exp = exp;
    const auto path = std::filesystem::temp_directory_path() / ("vkamp_suggest_" + std::to_string(exp) + ".yaml");
    std::ofstream(path) << train::suggestion_yaml(r);
    config::TrainConfig cfg;
    config::apply_config_file(path.string(), cfg);
    std::filesystem::remove(path);
    EXPECT_EQ(cfg.scaler.mode, config::LossScaleMode::Static);
    EXPECT_EQ(cfg.scaler.initial_loss_scale, std::ldexp(1.0, exp));
  }
}

TEST(ScaleSuggestion, ScaleRangeIsTheWholeExponentsInsideMinAndMax) {
  config::ScalerConfig sc;
  EXPECT_EQ(train::scale_exponent_range(sc), std::make_pair(0, 127));
  sc.min_loss_scale = 0.3;  // 2^-1.7: k >= -1
  sc.max_loss_scale = 1000;  // k <= 9
  EXPECT_EQ(train::scale_exponent_range(sc), std::make_pair(-1, 9));
}

}  // namespace
}  // namespace vkamp::test
