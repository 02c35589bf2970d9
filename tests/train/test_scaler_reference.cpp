// DeepSpeed's consecutive_hysteresis on the GPU against ScalerReference
// (written from PyTorch's and DeepSpeed's update rules): an overflow
// pattern that the two settings treat differently.
#include "scaler_reference.hpp"
#include "support/gpu_test.hpp"
#include "tiny_model.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

class ConsecutiveHysteresis : public GpuTestP<bool> {};

std::vector<float> scale_trajectory(const config::TrainConfig& c) {
  const auto data = one_batch_classification(64, 6, 3, 31);
  train::Trainer t(ctx(), c, models::parse_model("6-5t-3"), train::LossKind::SoftmaxXent, data);
  std::vector<float> scales;
  t.on_step = [&](const train::StepMetrics& m) { scales.push_back(m.loss_scale); };
  t.run();
  return scales;
}

config::TrainConfig pattern_config(bool consecutive) {
  config::TrainConfig c;
  c.batch = 8;
  c.epochs = 4;  // 32 updates
  c.seed = 9;
  c.scaler.histogram_interval = 0;
  c.scaler.initial_loss_scale = 256;
  c.scaler.steps_per_increase = 4;
  c.scaler.hysteresis = 3;
  c.scaler.consecutive_hysteresis = consecutive;
  // Overflows one step apart (a clean step between each), then a burst of
  // three, then one after two growths.
  c.inject_overflow = config::parse_step_ranges("1,3,5,7,9-11,20");
  return c;
}

TEST_P(ConsecutiveHysteresis, ScaleFollowsTheReference) {
  const config::TrainConfig c = pattern_config(GetParam());
  const auto scales = scale_trajectory(c);
  ASSERT_GT(scales.size(), 21u);
  ScalerReference ref(c.scaler);
  for (uint32_t s = 0; s < scales.size(); ++s) {
    bool inj = false;
    for (auto r : c.inject_overflow) inj = inj || (s >= r.first && s <= r.last);
    ASSERT_EQ(scales[s], ref.step(inj)) << "step " << s;
  }
  // The pattern tells the settings apart: refilled by every clean step,
  // the isolated overflows never use up the hysteresis of 3 and only the
  // burst's third overflow backs off; refilled only by growth, the third
  // overflow (step 5) backs off and so does every later one.
  if (GetParam()) {
    EXPECT_EQ(scales[11], 256.0f);
    EXPECT_EQ(scales[12], 128.0f);
  } else {
    EXPECT_EQ(scales[5], 256.0f);
    EXPECT_EQ(scales[6], 128.0f);
    EXPECT_EQ(scales[12], 8.0f);  // 5, 7, 9, 10, 11 each halved it
  }
}

INSTANTIATE_TEST_SUITE_P(Scaler, ConsecutiveHysteresis, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "on" : "off"; });

}  // namespace
}  // namespace vkamp::test
