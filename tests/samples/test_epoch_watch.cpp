// The per-epoch line and --early-stop's bookkeeping (app/epoch_watch.hpp,
// app/monitor.hpp): the train loss is the mean of the applied steps since
// the last line, skipped steps are counted apart, the best is judged on
// --early-stop-monitor (the held-out loss unless told otherwise) in the mode
// its metric implies, an improvement is by more than --early-stop-min-delta,
// and patience counts evaluations after the best.
#include <gtest/gtest.h>

#include <cmath>

#include "app/epoch_watch.hpp"
#include "vkamp/config_error.hpp"

namespace vkamp::app {
namespace {

train::StepMetrics step(float loss, bool skipped, float scale) {
  train::StepMetrics m;
  m.loss = loss;
  m.skipped = m.overflow = skipped;
  m.loss_scale = scale;
  return m;
}

train::EpochEnd end_of(uint32_t epoch, const char* metric, double value, double loss = 0) {
  train::EpochEnd e;
  e.epoch = epoch;
  e.applied = 10 * epoch;
  e.metric = metric;
  e.value = value;
  e.loss = loss;
  return e;
}

TEST(EpochWatch, TheLineHoldsTheMeanAppliedLossHeldOutValuesSkipsAndScale) {
  EpochWatch w(12, false, {});
  w.add(step(1.0f, false, 65536));
  w.add(step(INFINITY, true, 65536));
  w.add(step(2.0f, false, 32768));
  const EpochWatch::Verdict v = w.end(end_of(3, "accuracy", 0.875, 0.4));
  EXPECT_EQ(v.line, "epoch  3/12  train loss 1.5000  val loss 0.4000  val accuracy 87.50%  skipped 1  scale 32768");
  EXPECT_TRUE(v.improved) << "the first evaluation is the best so far";
  EXPECT_FALSE(v.stop);
  // The next line counts from there.
  w.add(step(0.5f, false, 32768));
  EXPECT_EQ(w.end(end_of(4, "accuracy", 0.9, 0.3)).line,
            "epoch  4/12  train loss 0.5000  val loss 0.3000  val accuracy 90.00%  skipped 0  scale 32768");
}

TEST(EpochWatch, NamesPointsByStepWithEvalEveryAndShowsEachMetric) {
  EpochWatch w(1, true, {});
  w.add(step(2.5f, false, 1024));
  EXPECT_EQ(w.end(end_of(0, "loss", 2.25)).line, "step     0  train loss 2.5000  val loss 2.2500  skipped 0  scale 1024");
  EXPECT_EQ(w.end(end_of(1, "mse", 0.0123)).line, "step    10  train loss -  val mse 0.0123  skipped 0  scale 1024")
      << "no applied step since the last line";
  EXPECT_EQ(w.end(end_of(2, "", 0)).line, "step    20  train loss -  skipped 0  scale 1024") << "no held-out set";
  EXPECT_FALSE(w.best()->metric.empty());
}

TEST(EpochWatch, ImprovesIsHigherAccuracyAndLowerLossByMoreThanMinDelta) {
  EXPECT_TRUE(improves(Monitor::ValAccuracy, 0.9, 0.8, 0));
  EXPECT_FALSE(improves(Monitor::ValAccuracy, 0.8, 0.8, 0)) << "a tie is no improvement";
  EXPECT_FALSE(improves(Monitor::ValAccuracy, 0.7, 0.8, 0));
  EXPECT_TRUE(improves(Monitor::ValLoss, 1.0, 1.5, 0));
  EXPECT_FALSE(improves(Monitor::ValLoss, 1.5, 1.0, 0));
  EXPECT_TRUE(improves(Monitor::ValMse, 0.1, 0.2, 0));
  EXPECT_FALSE(improves(Monitor::ValMse, 0.2, 0.2, 0));
  // Keras's min_delta: a gain of min_delta or less does not count.
  EXPECT_FALSE(improves(Monitor::ValLoss, 0.95, 1.0, 0.05));
  EXPECT_TRUE(improves(Monitor::ValLoss, 0.94, 1.0, 0.05));
  EXPECT_FALSE(improves(Monitor::ValAccuracy, 0.81, 0.8, 0.02));
  EXPECT_TRUE(improves(Monitor::ValAccuracy, 0.83, 0.8, 0.02));
}

TEST(EpochWatch, EarlyStopAfterPatienceEvaluationsWithoutImprovement) {
  EpochWatch w(10, false, {Monitor::ValMse, 2, 0});
  EXPECT_TRUE(w.end(end_of(1, "mse", 1.0, 1.0)).improved);
  EXPECT_TRUE(w.end(end_of(2, "mse", 0.5, 0.5)).improved);
  const EpochWatch::Verdict a = w.end(end_of(3, "mse", 0.5, 0.5));
  EXPECT_FALSE(a.improved);
  EXPECT_FALSE(a.stop) << "one evaluation without improvement, patience 2";
  EXPECT_TRUE(w.end(end_of(4, "mse", 0.7, 0.7)).stop);
  ASSERT_TRUE(w.best());
  EXPECT_EQ(w.best()->epoch, 2u);
  EXPECT_EQ(w.best_value(), 0.5);
  EXPECT_EQ(w.where(*w.best()), "epoch 2");
  EXPECT_EQ(w.since_best(), 2u);

  EpochWatch never(10, false, {Monitor::ValAccuracy, 0, 0});
  for (uint32_t e = 1; e <= 5; ++e) EXPECT_FALSE(never.end(end_of(e, "accuracy", 0.5)).stop) << "patience 0: never";
}

// The run: 60 held-out rows move the accuracy in 1.67% steps, so it
// ties while the held-out loss still falls. The default monitor (val_loss)
// sees the improvement and keeps going; val_accuracy stops.
TEST(EpochWatch, DefaultMonitorIsTheHeldOutLossWhichKeepsImprovingWhileAccuracyTies) {
  EXPECT_EQ(StopRule{}.monitor, Monitor::ValLoss);
  EXPECT_EQ(RunOptions{}.early_stop_monitor, Monitor::ValLoss);
  EpochWatch by_loss(20, false, {Monitor::ValLoss, 3, 0});
  EpochWatch by_accuracy(20, false, {Monitor::ValAccuracy, 3, 0});
  bool loss_stopped = false, accuracy_stopped = false;
  for (uint32_t e = 1; e <= 6; ++e) {
    const train::EpochEnd end = end_of(e, "accuracy", 0.9, 0.5 - 0.01 * e);
    loss_stopped |= by_loss.end(end).stop;
    accuracy_stopped |= by_accuracy.end(end).stop;
  }
  EXPECT_FALSE(loss_stopped) << "the loss fell at every epoch";
  EXPECT_EQ(by_loss.best()->epoch, 6u);
  EXPECT_DOUBLE_EQ(by_loss.best_value(), 0.44);
  EXPECT_TRUE(accuracy_stopped) << "the accuracy tied for 3 epochs after the first";
  EXPECT_EQ(by_accuracy.best()->epoch, 1u);
}

TEST(EpochWatch, MinDeltaKeepsTheBestWhereItWasForSmallGains) {
  EpochWatch w(20, false, {Monitor::ValLoss, 2, 0.05});
  EXPECT_TRUE(w.end(end_of(1, "loss", 1.0, 1.0)).improved);
  EXPECT_FALSE(w.end(end_of(2, "loss", 0.97, 0.97)).improved) << "0.03 is not more than 0.05";
  const EpochWatch::Verdict v = w.end(end_of(3, "loss", 0.96, 0.96));
  EXPECT_FALSE(v.improved) << "measured from the best, 1.0, not from 0.97";
  EXPECT_TRUE(v.stop);
  EXPECT_EQ(w.best()->epoch, 1u);
}

TEST(EpochWatch, AMonitorTheRunDoesNotMeasureIsRefused) {
  EXPECT_NO_THROW(check_monitor(Monitor::ValLoss, "accuracy"));
  EXPECT_NO_THROW(check_monitor(Monitor::ValLoss, "mse"));
  EXPECT_NO_THROW(check_monitor(Monitor::ValLoss, "loss"));
  EXPECT_NO_THROW(check_monitor(Monitor::ValAccuracy, "accuracy"));
  EXPECT_NO_THROW(check_monitor(Monitor::ValMse, "mse"));
  EXPECT_THROW(check_monitor(Monitor::ValAccuracy, "mse"), vkamp::ConfigError);
  EXPECT_THROW(check_monitor(Monitor::ValAccuracy, "loss"), vkamp::ConfigError);
  EXPECT_THROW(check_monitor(Monitor::ValMse, "accuracy"), vkamp::ConfigError);
  EpochWatch w(3, false, {Monitor::ValMse, 1, 0});
  EXPECT_THROW(w.end(end_of(1, "accuracy", 0.5, 0.7)), vkamp::ConfigError);
}

// --eval-iters: the line says how much of the held-out set it read.
TEST(EpochWatch, ASampledEvaluationSaysHowManyBatchesItRead) {
  EpochWatch w(3, false, {}, " on 8 of 40 batches");
  EXPECT_EQ(w.end(end_of(1, "accuracy", 0.7594, 0.6)).line,
            "epoch 1/3  train loss -  val loss 0.6000  val accuracy 75.94% on 8 of 40 batches  skipped 0  scale 0");
  EXPECT_EQ(monitor_text(Monitor::ValAccuracy, 0.7594), "val_accuracy 75.94%");
  EXPECT_EQ(monitor_text(Monitor::ValLoss, 0.6), "val_loss 0.6000");
}

}  // namespace
}  // namespace vkamp::app
