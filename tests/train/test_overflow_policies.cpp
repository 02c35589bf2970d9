// What happens to an overflowed step under each policy, beyond the scale
// rule: retry backs the scale off before every recomputation whatever the
// hysteresis, and needs dynamic scaling; apply applies the update but
// stops the run once a master weight is non-finite, naming the step and the
// tensor, without overwriting the last good checkpoint.
#include <cmath>

#include <filesystem>

#include "support/gpu_test.hpp"
#include "tiny_model.hpp"
#include "vkamp/train/trainer.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::test {
namespace {

using config::OverflowPolicy;
using train::StepMetrics;
using config::TrainConfig;
using train::Trainer;

// The tiny problem, one epoch: 8 updates.
TrainConfig toy(Format fmt) {
  TrainConfig c = tiny_config(fmt);
  c.epochs = 1;
  return c;
}

class OverflowPolicies : public GpuTest {};

// Hysteresis 3 would absorb two overflows at the same scale; a retry at
// the same scale recomputes the same overflow, so every retry backs off.
TEST_F(OverflowPolicies, RetryBacksOffBeforeEveryRecomputeWhateverTheHysteresis) {
  TrainConfig c = toy(Format::F16);
  c.scaler.policy = OverflowPolicy::Retry;
  c.scaler.max_retries = 2;
  c.scaler.hysteresis = 3;
  c.scaler.initial_loss_scale = 1024;
  c.scaler.steps_per_increase = 1000;
  c.inject_overflow = config::parse_step_ranges("2-3");
  Trainer t(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, tiny_data(64, 6));
  train::TrainSummary s;
  auto steps = run_steps(t, &s);
  ASSERT_GE(steps.size(), 5u);
  EXPECT_EQ(steps[2].loss_scale, 1024.0f);
  EXPECT_EQ(steps[3].loss_scale, 512.0f) << "the first retry runs at a lower scale";
  EXPECT_EQ(steps[4].loss_scale, 256.0f) << "and so does the second";
  EXPECT_EQ(steps[4].retries, 2u);
  EXPECT_FALSE(steps[4].skipped);
  EXPECT_EQ(steps[3].cursor, steps[2].cursor) << "the batch is not consumed by a retry";
  EXPECT_EQ(steps[4].loss, steps[2].loss) << "the same batch, recomputed";
  EXPECT_FALSE(s.failed) << s.failure;
}

TEST_F(OverflowPolicies, RetryWithAStaticScaleOrNoneIsAConfigError) {
  for (auto mode : {config::LossScaleMode::Static, config::LossScaleMode::None}) {
    TrainConfig c = toy(Format::F16);
    c.scaler.policy = OverflowPolicy::Retry;
    c.scaler.mode = mode;
    try {
      config::validate(c);
      ADD_FAILURE() << "retry without dynamic scaling was accepted";
    } catch (const vkamp::ConfigError& e) {
      std::string m = e.what();
      EXPECT_NE(m.find("--overflow-policy retry (overflow_policy)"), std::string::npos) << m;
      EXPECT_NE(m.find("--loss-scale (loss_scaling_factor)"), std::string::npos) << m;
    }
  }
}

// The injected inf at step 5 goes into fc1.weight[0] and is applied: the
// run stops at step 6 (read from its record, no extra host wait) with the
// step and the tensor named; the checkpoint of step 3 is kept, the one due
// at step 6 (after the broken update) is not written.
TEST_F(OverflowPolicies, ApplyStopsWhenAMasterWeightBecomesNonFinite) {
  auto dir = std::filesystem::temp_directory_path() / ("vkamp-apply-" + std::to_string(vkamp::platform::process_id()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "ck.bin").string();
  TrainConfig c = toy(Format::F32);
  c.scaler.policy = OverflowPolicy::Apply;
  c.inject_overflow = config::parse_step_ranges("5");
  c.checkpoint_path = path;
  c.checkpoint_every = 3;
  auto data = tiny_data(64, 5);
  Trainer t(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, data);
  train::TrainSummary s;
  auto steps = run_steps(t, &s);
  ASSERT_EQ(steps.size(), 6u) << "steps 0-5 ran; step 6 saw the broken weights and did nothing";
  EXPECT_TRUE(steps[5].overflow);
  EXPECT_FALSE(steps[5].skipped) << "apply applies";
  EXPECT_EQ(s.applied, 6u);
  EXPECT_TRUE(s.failed);
  EXPECT_NE(s.failure.find("non-finite at step 5: first fc1.weight[0]"), std::string::npos) << s.failure;
  EXPECT_FALSE(std::isfinite(t.model().read_master()[t.model().tensors()[0].offset]));

  Trainer fresh(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, data);
  fresh.load_checkpoint(path);
  EXPECT_EQ(fresh.read_state().applied, 3u) << "the step-3 checkpoint";
  for (float w : fresh.model().read_master()) ASSERT_TRUE(std::isfinite(w));
  std::filesystem::remove_all(dir);
}

// A clean apply run (no overflow) is not stopped by the check.
TEST_F(OverflowPolicies, ApplyWithoutOverflowsTrainsToTheEnd) {
  TrainConfig c = toy(Format::F16);
  c.scaler.policy = OverflowPolicy::Apply;
  Trainer t(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, tiny_data(64, 8));
  train::TrainSummary s;
  run_steps(t, &s);
  EXPECT_FALSE(s.failed) << s.failure;
  EXPECT_EQ(s.applied, 8u);
  EXPECT_EQ(s.host_waits_in_loop, 0u);
}

}  // namespace
}  // namespace vkamp::test
