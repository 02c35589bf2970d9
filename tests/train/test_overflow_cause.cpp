// The fail-fast message's likely cause (OverflowCause), from step records
// as the host reads them: a loss never finite points at the data, finite
// losses with overflows from the first step at large values, overflows
// after updates at the learning rate, and injected ones at the injection.
#include "vkamp/train/overflow_cause.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace vkamp::train {
namespace {

// A record: its step, loss, whether it overflowed, and the updates applied
// after it.
StepMetrics record(uint32_t step, float loss, bool overflow, uint32_t applied) {
  StepMetrics m;
  m.step = step;
  m.loss = loss;
  m.overflow = m.skipped = overflow;
  m.applied = applied;
  return m;
}

bool says(const std::string& text, const std::string& phrase) { return text.find(phrase) != std::string::npos; }

TEST(OverflowCause, LossNeverFiniteIsTheData) {
  OverflowCause c;
  for (uint32_t s = 0; s < 20; ++s) c.add(record(s, NAN, true, 0));
  const std::string why = c.explain(Format::F16, false);
  EXPECT_TRUE(says(why, "the loss was not finite at any step")) << why;
  EXPECT_TRUE(says(why, "the data is the likely cause")) << why;
  EXPECT_TRUE(says(why, "past fp16's range")) << why;
  EXPECT_FALSE(says(why, "learning rate")) << why;
}

TEST(OverflowCause, FiniteLossButOverflowsFromTheStartAreLargeValues) {
  OverflowCause c;
  for (uint32_t s = 0; s < 20; ++s) c.add(record(s, 3e4f, true, 0));
  const std::string why = c.explain(Format::F16, false);
  EXPECT_TRUE(says(why, "every step overflowed from step 0 on, with a finite loss")) << why;
  EXPECT_TRUE(says(why, "large inputs or targets")) << why;
}

TEST(OverflowCause, OverflowsAfterUpdatesAreTheLearningRate) {
  OverflowCause c;
  uint32_t applied = 0;
  for (uint32_t s = 0; s < 30; ++s) c.add(record(s, 1.f, s % 7 == 3, s % 7 == 3 ? applied : ++applied));
  for (uint32_t s = 30; s < 50; ++s) c.add(record(s, s < 33 ? 50.f : INFINITY, true, applied));
  EXPECT_EQ(c.overflows_from(), 30u);
  const std::string why = c.explain(Format::F16, false);
  EXPECT_TRUE(says(why, "the overflows began at step 30 after " + std::to_string(applied) + " updates trained")) << why;
  EXPECT_TRUE(says(why, "the loss turned non-finite at step 33")) << why;
  EXPECT_TRUE(says(why, "the learning rate (or the model) is the likely cause")) << why;
}

TEST(OverflowCause, InjectedOverflowsSaySo) {
  OverflowCause c;
  c.add(record(0, 1.f, false, 1));
  c.add(record(1, 1.f, true, 1));
  const std::string why = c.explain(Format::BF16, true);
  EXPECT_TRUE(says(why, "injected (--inject-overflow covers step 1)")) << why;
}

}  // namespace
}  // namespace vkamp::train
