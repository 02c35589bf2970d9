// The per-epoch line and --early-stop's bookkeeping (app/epoch_watch.hpp):
// the train loss is the mean of the applied steps since the last line,
// skipped steps are counted apart, the best held-out value is the highest
// accuracy or the lowest loss, and patience counts evaluations after it.
#include <gtest/gtest.h>

#include <cmath>

#include "app/epoch_watch.hpp"

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
  EpochWatch w(12, false, 0);
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
  EpochWatch w(1, true, 0);
  w.add(step(2.5f, false, 1024));
  EXPECT_EQ(w.end(end_of(0, "loss", 2.25)).line, "step     0  train loss 2.5000  val loss 2.2500  skipped 0  scale 1024");
  EXPECT_EQ(w.end(end_of(1, "mse", 0.0123)).line, "step    10  train loss -  val mse 0.0123  skipped 0  scale 1024")
      << "no applied step since the last line";
  EXPECT_EQ(w.end(end_of(2, "", 0)).line, "step    20  train loss -  skipped 0  scale 1024") << "no held-out set";
  EXPECT_FALSE(w.best()->metric.empty());
}

TEST(EpochWatch, BetterIsHigherAccuracyAndLowerLoss) {
  EXPECT_TRUE(better("accuracy", 0.9, 0.8));
  EXPECT_FALSE(better("accuracy", 0.8, 0.8)) << "a tie is no improvement";
  EXPECT_TRUE(better("loss", 1.0, 1.5));
  EXPECT_TRUE(better("mse", 0.1, 0.2));
  EXPECT_FALSE(better("mse", 0.2, 0.2));
}

TEST(EpochWatch, EarlyStopAfterPatienceEvaluationsWithoutImprovement) {
  EpochWatch w(10, false, 2);
  EXPECT_TRUE(w.end(end_of(1, "mse", 1.0)).improved);
  EXPECT_TRUE(w.end(end_of(2, "mse", 0.5)).improved);
  const EpochWatch::Verdict a = w.end(end_of(3, "mse", 0.5));
  EXPECT_FALSE(a.improved);
  EXPECT_FALSE(a.stop) << "one evaluation without improvement, patience 2";
  EXPECT_TRUE(w.end(end_of(4, "mse", 0.7)).stop);
  ASSERT_TRUE(w.best());
  EXPECT_EQ(w.best()->epoch, 2u);
  EXPECT_EQ(w.where(*w.best()), "epoch 2");
  EXPECT_EQ(w.since_best(), 2u);

  EpochWatch never(10, false, 0);
  for (uint32_t e = 1; e <= 5; ++e) EXPECT_FALSE(never.end(end_of(e, "accuracy", 0.5)).stop) << "patience 0: never";
}

}  // namespace
}  // namespace vkamp::app
