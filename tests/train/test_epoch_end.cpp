// Trainer::on_epoch_end: once per epoch, after the epoch's last update and
// before any step of the next, with the held-out evaluation of exactly the
// weights of that update; the steady-state loop still never waits.
#include "support/gpu_test.hpp"
#include "tiny_model.hpp"
#include "vkamp/data/dataset.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

using train::EpochEnd;
using train::Trainer;

config::TrainConfig toy_config(uint32_t epochs) {
  config::TrainConfig c;
  c.batch = 8;
  c.epochs = epochs;
  c.seed = 11;
  c.optimizer.lr = 0.1;
  c.scaler.histogram_interval = 0;
  return c;
}

class TrainingEpochs : public GpuTest {};

TEST_F(TrainingEpochs, OnEpochEndFiresOncePerEpochWithTheHeldOutAccuracy) {
  const data::HostData all = tiny_data(104, 1);
  const data::HostData data = all.rows(0, 64), held_out = all.rows(64, 40);  // 8 updates per epoch
  config::TrainConfig c = toy_config(3);
  c.inject_overflow = config::parse_step_ranges("7");  // the last step of epoch 1 is skipped and redone
  Trainer t(ctx(), c, tiny_model(), train::LossKind::SoftmaxXent, data);
  t.set_held_out(held_out);
  std::vector<EpochEnd> ends;
  uint32_t steps_seen = 0;
  t.on_step = [&](const train::StepMetrics&) { ++steps_seen; };
  t.on_epoch_end = [&](const EpochEnd& e) {
    EXPECT_EQ(steps_seen, e.step) << "fired after the epoch's last record, before any later one";
    ends.push_back(e);
  };
  train::TrainSummary s = t.run();
  ASSERT_EQ(ends.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(ends[i].epoch, i + 1);
    EXPECT_EQ(ends[i].applied, 8 * (i + 1));
    EXPECT_EQ(ends[i].step, 8 * (i + 1) + 1) << "the skipped step 7 counts as attempted";
    EXPECT_EQ(ends[i].metric, "accuracy");
    EXPECT_GE(ends[i].value, 0.0);
    EXPECT_LE(ends[i].value, 1.0);
  }
  EXPECT_GT(ends.back().value, 0.5) << "the toy problem is learnable: 3 epochs should beat chance (1/3)";
  EXPECT_EQ(ends.back().value, t.evaluate(held_out)) << "the last epoch end sees the final weights";
  EXPECT_EQ(s.host_waits_in_loop, 0u) << "draining at epoch ends is counted apart";
  EXPECT_GT(s.host_waits_between_epochs, 0u);

  // A run of one epoch ends with the weights the first epoch end evaluated.
  config::TrainConfig one = c;
  one.epochs = 1;
  Trainer first(ctx(), one, tiny_model(), train::LossKind::SoftmaxXent, data);
  first.run();
  EXPECT_EQ(first.evaluate(held_out), ends[0].value) << "epoch 1 was evaluated after a later step ran";
}

TEST_F(TrainingEpochs, WithoutAHeldOutSetItStillFiresWithNoMetric) {
  Trainer t(ctx(), toy_config(2), tiny_model(), train::LossKind::SoftmaxXent, tiny_data(64, 3));
  std::vector<EpochEnd> ends;
  t.on_epoch_end = [&](const EpochEnd& e) { ends.push_back(e); };
  t.run();
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_TRUE(ends[0].metric.empty());
  EXPECT_EQ(ends[1].applied, 16u);
}

// The held-out loss comes with the accuracy, from the same pass; and
// request_stop() from on_epoch_end (the app's --early-stop) ends the run
// before any step of the next epoch, with no failure reported.
TEST_F(TrainingEpochs, EpochEndCarriesTheLossAndRequestStopEndsTheRunThere) {
  const data::HostData all = tiny_data(104, 5);
  const data::HostData data = all.rows(0, 64), held_out = all.rows(64, 40);  // 8 updates per epoch
  Trainer t(ctx(), toy_config(5), tiny_model(), train::LossKind::SoftmaxXent, data);
  t.set_held_out(held_out);
  std::vector<EpochEnd> ends;
  std::vector<float> weights_at_2;
  uint32_t steps_seen = 0;
  t.on_step = [&](const train::StepMetrics&) { ++steps_seen; };
  t.on_epoch_end = [&](const EpochEnd& e) {
    ends.push_back(e);
    if (e.epoch == 2) {
      weights_at_2 = t.model().read_master();
      t.request_stop();
    }
  };
  t.start();
  while (t.advance()) {
  }
  const train::TrainSummary s = t.finish();
  EXPECT_FALSE(s.failed) << s.failure;
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(steps_seen, 16u) << "no step of epoch 3 ran";
  EXPECT_EQ(s.applied, 16u);
  EXPECT_EQ(t.model().read_master(), weights_at_2);
  EXPECT_NEAR(ends[1].loss, t.mean_loss(held_out), 1e-6) << "the mean cross-entropy of the same weights";
  EXPECT_EQ(ends[1].value, t.evaluate(held_out));
}

}  // namespace
}  // namespace vkamp::test
