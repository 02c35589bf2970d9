// --loss-scale auto on the GPU (step_control.comp with the shared chooser,
// gpu_abi/scale_choice.h): after the warm-up the scale is the chooser's pick
// from the very histograms the steps published, run on the host, and what
// --loss-scale suggest's host side (ScaleSuggester) names from them; re-checks
// move it by whole doublings only; one overflow moves nothing, more than
// the window tolerates lower it; a checkpoint carries the state.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>

#include "support/gpu_test.hpp"
#include "tiny_model.hpp"
#include "vkamp/train/scale_suggestion.hpp"
#include "vkamp/train/step_params.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

using train::kHistBins;
using train::kHistLogBins;

config::TrainConfig auto_config() {
  config::TrainConfig c;
  c.precision = Format::F16;
  c.batch = 8;
  c.epochs = 40;
  c.seed = 4;
  c.optimizer.lr = 0.1;
  c.scaler.mode = config::LossScaleMode::Auto;
  c.scaler.histogram_interval = 1;
  c.scaler.underflow_target = 0.01;
  c.scaler.min_loss_scale = 1.0 / 1024;  // room below 1 for the chooser and the storm
  return c;
}

bool power_of_two(double x) {
  int e;
  return x > 0 && std::frexp(x, &e) == 0.5;
}

class AutoScale : public GpuTest {};

TEST_F(AutoScale, AfterTheWarmUpTheScaleIsTheChoosersPickFromThoseHistograms) {
  auto data = one_batch_classification(16, 6, 3, 41);
  config::TrainConfig c = auto_config();
  c.scaler.auto_warmup = 6;
  c.scaler.auto_recheck = 1000;
  train::Trainer t(ctx(), c, models::parse_model("6-8r-3"), train::LossKind::SoftmaxXent, data);
  // The window as step_control adds it: per step, the tensors' counts in
  // uint, then into float in bin order.
  float counts[kHistLogBins] = {};
  float total = 0;
  std::vector<train::TensorHistogram> step_hists;
  auto add_step = [&] {
    uint32_t column[kHistBins] = {};
    for (const auto& h : step_hists)
      for (uint32_t b = 0; b < kHistBins; ++b) column[b] += h.bins[b];
    float sum = 0;
    for (uint32_t b = 0; b < kHistBins; ++b) {
      if (b < kHistLogBins) counts[b] += float(column[b]);
      sum += float(column[b]);
    }
    total += sum;
    step_hists.clear();
  };
  train::ScaleSuggester suggester;  // --loss-scale suggest's host side, fed the same run
  t.on_histogram = [&](const train::TensorHistogram& h) {
    step_hists.push_back(h);
    suggester.add(h);
  };
  std::vector<float> scales;
  t.on_step = [&](const train::StepMetrics& m) { scales.push_back(m.loss_scale); };
  t.start();
  for (uint32_t s = 0; s < 6; ++s) {
    ASSERT_TRUE(t.advance());
    t.sync();
    ASSERT_EQ(step_hists.size(), t.model().tensors().size()) << "step " << s;
    add_step();
  }
  const train::AutoScaleState a = t.read_auto_scale();
  EXPECT_EQ(a.phase, 1u);
  EXPECT_EQ(a.checks, 1u);
  EXPECT_EQ(a.window_start, 6u);
  const train::FormatExponents fe = train::format_exponents(c.precision);
  const auto [k_lo, k_hi] = train::scale_exponent_range(c.scaler);
  const train::ScaleChoice want =
      train::choose_scale(counts, total, fe.normal_exp, fe.top_exp, k_lo, k_hi, float(c.scaler.underflow_target));
  EXPECT_EQ(a.chosen_exp, want.exp);
  // suggest over the same steps names auto's first choice, exactly.
  config::ScalerConfig sc = c.scaler;
  sc.suggest_steps = c.scaler.auto_warmup;
  const train::ScaleSuggestion suggested = suggester.suggest(c.precision, sc);
  EXPECT_EQ(suggested.histograms, 6u);
  EXPECT_EQ(suggested.exp, a.chosen_exp);
  EXPECT_EQ(suggested.headroom, a.last_headroom);
  EXPECT_FLOAT_EQ(float(suggested.underflow), a.last_underflow);  // a GPU divides within 2.5 ulp
  EXPECT_EQ(a.last_headroom, want.headroom);
  EXPECT_EQ(a.last_underflow, want.underflow);
  EXPECT_EQ(t.read_state().scale, std::ldexp(1.0f, want.exp));
  for (float s : scales) EXPECT_TRUE(power_of_two(s)) << "dynamic scaling from 65536";
  EXPECT_TRUE(want.met);
  ASSERT_TRUE(t.advance());
  t.sync();
  EXPECT_EQ(scales.back(), std::ldexp(1.0f, want.exp)) << "the step after the warm-up runs at the chosen scale";
  t.finish();
}

TEST_F(AutoScale, OneOverflowMovesNothingAndAStormLowersByWholeDoublings) {
  auto data = one_batch_classification(16, 6, 3, 41);
  config::TrainConfig c = auto_config();
  c.scaler.auto_warmup = 4;    // the first choice after step 3
  c.scaler.auto_recheck = 6;   // then after steps 9, 15, 21, ...
  c.scaler.auto_overflow_tolerance = 2;
  c.scaler.initial_loss_scale = 256;  // no overflow of its own in the warm-up: only the injected ones
  c.scaler.underflow_target = 0;      // a choice above min_loss_scale, so that the storm can lower it
  c.max_steps = 24;
  // One overflow at step 6 (mid-window); three in a row from step 11: the
  // third is past the tolerance, and the re-check comes at once.
  c.inject_overflow = {{6, 6}, {11, 13}};
  train::Trainer t(ctx(), c, models::parse_model("6-8r-3"), train::LossKind::SoftmaxXent, data);
  std::vector<train::StepMetrics> steps;
  t.on_step = [&](const train::StepMetrics& m) { steps.push_back(m); };
  const train::TrainSummary s = t.run();
  ASSERT_FALSE(s.failed) << s.failure;
  ASSERT_GE(steps.size(), 20u);
  EXPECT_TRUE(steps[6].skipped && steps[6].overflow);
  EXPECT_EQ(steps[7].loss_scale, steps[6].loss_scale) << "a single overflow does not back off";
  EXPECT_EQ(steps[6].loss_scale, steps[4].loss_scale);
  // 4 skipped steps make 28: re-checks after steps 3, 9, 13 (the storm),
  // 19 and 25. Between them the scale holds.
  for (uint32_t i = 5; i < steps.size(); ++i) {
    ASSERT_TRUE(power_of_two(steps[i].loss_scale)) << "step " << i << " scale " << steps[i].loss_scale;
    const bool after_check = i == 10 || i == 14 || i == 20 || i == 26;
    if (!after_check) EXPECT_EQ(steps[i].loss_scale, steps[i - 1].loss_scale) << "step " << i;
    else EXPECT_TRUE(power_of_two(steps[i].loss_scale / steps[i - 1].loss_scale)) << "step " << i;
  }
  EXPECT_LE(steps[14].loss_scale, steps[13].loss_scale / 2) << "the storm lowers the scale a doubling at least";
  const train::AutoScaleState a = t.read_auto_scale();
  EXPECT_EQ(a.checks, 5u);
  EXPECT_GE(a.moves, 1u);
  EXPECT_EQ(s.skipped, 4u);
}

TEST_F(AutoScale, ACheckpointCarriesTheWindowAndTheChoice) {
  auto data = one_batch_classification(16, 6, 3, 41);
  config::TrainConfig c = auto_config();
  c.scaler.auto_warmup = 3;
  c.scaler.auto_recheck = 100;
  c.max_steps = 7;
  const std::string path = (std::filesystem::temp_directory_path() / "vkamp_auto_scale.ckpt").string();
  train::AutoScaleState saved;
  {
    train::Trainer t(ctx(), c, models::parse_model("6-8r-3"), train::LossKind::SoftmaxXent, data);
    t.run();
    saved = t.read_auto_scale();
    t.save_checkpoint(path);
  }
  EXPECT_EQ(saved.phase, 1u);
  EXPECT_GT(saved.window_histograms, 0u) << "the steps since the warm-up's choice";
  c.max_steps = 8;
  train::Trainer t(ctx(), c, models::parse_model("6-8r-3"), train::LossKind::SoftmaxXent, data);
  t.load_checkpoint(path);
  const train::AutoScaleState back = t.read_auto_scale();
  std::filesystem::remove(path);
  EXPECT_EQ(std::memcmp(&back, &saved, sizeof saved), 0);
}

}  // namespace
}  // namespace vkamp::test
