// RunTally's underflow accounting for the run summary: the means over the
// steps and the last step's share the scale saved, the smallest headroom of
// a step without overflow, and the tensor that lost the most unscaled.
#include <gtest/gtest.h>

#include <bit>

#include "vkamp/graph/param_layout.hpp"
#include "vkamp/train/run_tally.hpp"

namespace vkamp::train {
namespace {

StepMetrics step(uint32_t n, uint32_t zeros, uint32_t subnormal, uint32_t lost, float max_abs, bool overflow = false) {
  StepMetrics m;
  m.step = n;
  m.zeros = zeros;
  m.subnormal = subnormal;
  m.lost_unscaled = lost;
  m.max_abs_grad = max_abs;
  m.overflow = m.skipped = overflow;
  return m;
}

TensorUnderflow tensors(uint32_t n, uint32_t lost_a, uint32_t lost_b) {
  TensorUnderflow u;
  u.step = n;
  u.stats = {TensorStats{0, 0, lost_a, 0, 0}, TensorStats{0, 0, lost_b, 0, 0}};
  return u;
}

TEST(RunTally, AddsUpTheUnderflowOfTheRun) {
  RunTally tally;
  graph::ParamTensor a{"fc1.weight", 0, 300}, b{"fc1.bias", 512, 100};
  tally.set_underflow_scope(underflow_scope(Format::F16, {a, b}));
  // 400 elements. Largest |g| 1000 leaves 6 doublings in fp16, 4000 leaves
  // 4; the overflowed step's largest finite |g| (60000: 0 left) is no headroom.
  std::vector<StepMetrics> steps{step(0, 40, 8, 20, 1000), step(1, 80, 4, 40, 4000), step(2, 0, 0, 0, 60000, true),
                                 step(3, 40, 0, 4, 1000)};
  for (StepMetrics& m : steps) tally.add(m, {});
  // fc1.bias (100 elements) loses 30% and 10% where fc1.weight loses 10%.
  tally.add(tensors(0, 30, 30));
  tally.add(tensors(1, 30, 10));
  const TrainSummary::Underflow u = tally.summary(1).underflow;
  EXPECT_DOUBLE_EQ(u.lost_unscaled_mean, (20 + 40 + 0 + 4) / 400.0 / 4);
  EXPECT_DOUBLE_EQ(u.lost_unscaled_last, 4 / 400.0);
  EXPECT_DOUBLE_EQ(u.zeros_mean, (40 + 80 + 0 + 40) / 400.0 / 4);
  EXPECT_DOUBLE_EQ(u.subnormal_mean, 12 / 400.0 / 4);
  EXPECT_EQ(u.min_headroom, 4);
  EXPECT_EQ(u.worst_tensor, "fc1.bias");
  EXPECT_DOUBLE_EQ(u.worst_tensor_lost_unscaled, (0.3 + 0.1) / 2);
}

TEST(RunTally, WithoutUnderflowTheSummaryHasNone) {
  RunTally tally;
  tally.set_underflow_scope(underflow_scope(Format::F16, {graph::ParamTensor{"w", 0, 10}}));
  StepMetrics m = step(0, 10, 0, 0, 0);  // every gradient zero: no headroom, nothing lost
  tally.add(m, {});
  TensorUnderflow u;
  u.stats = {TensorStats{10, 0, 0, 0, 0}};
  tally.add(u);
  const TrainSummary::Underflow s = tally.summary(1).underflow;
  EXPECT_EQ(s.min_headroom, std::nullopt);
  EXPECT_TRUE(s.worst_tensor.empty());
  EXPECT_DOUBLE_EQ(s.zeros_mean, 1.0);
}

}  // namespace
}  // namespace vkamp::train
