// Gradient accumulation: M = 8 micro-batches of 4 give the gradient of one
// batch of 32 within the error of ONE rounding to the storage format per
// micro-batch gradient (they are summed in fp32), in every format.
#include <cmath>
#include <cstdio>

#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "vkamp/data/dataset.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

const models::ModelSpec kModel = models::parse_model("6-5t-3");
const uint32_t kRows = 32, kMicro = 8;
const double kLr = 0x1p20;

config::TrainConfig one_sgd_step(Format fmt, uint32_t batch, uint32_t micro) {
  config::TrainConfig c;
  c.precision = fmt;
  c.batch = batch;
  c.grad_accum = micro;
  c.epochs = 1;  // one update: the data holds exactly batch x micro rows
  c.seed = 7;
  // w_after = w_before - lr g; a large power of two makes the fp32 rounding
  // of that subtraction (u32 |w|) negligible against lr g.
  c.optimizer.lr = kLr;
  c.optimizer.momentum = 0;
  c.scaler.histogram_interval = 0;
  c.scaler.mode = config::LossScaleMode::Static;
  c.scaler.initial_loss_scale = 1024;  // a power of two: unscaling is exact
  return c;
}

// The applied (unscaled, mean) gradient of one SGD step.
std::vector<double> gradient(const config::TrainConfig& c, const data::HostData& data) {
  train::Trainer t(ctx(), c, kModel, train::LossKind::SoftmaxXent, data);
  auto before = t.model().read_master();
  train::TrainSummary s = t.run();
  EXPECT_EQ(s.applied, 1u);
  auto after = t.model().read_master();
  std::vector<double> g(before.size());
  for (size_t i = 0; i < g.size(); ++i) g[i] = (double(before[i]) - after[i]) / kLr;
  return g;
}

class GradAccumulation : public GpuTestP<Format> {};

TEST_P(GradAccumulation, EightMicroBatchesEqualOneLargeBatchWithinOneRounding) {
  const Format fmt = GetParam();
  auto data = data::HostData::classification(data::make_classification(kRows, 6, 3, 10));
  auto big = gradient(one_sgd_step(fmt, kRows, 1), data);
  auto acc = gradient(one_sgd_step(fmt, kRows / kMicro, kMicro), data);

  // A_i = sum over rows of |row r's contribution to gradient i|, from one
  // fp32 step per row. However the rows are split into micro-batches,
  // sum_m |G_m,i| <= A_i.
  std::vector<double> A(big.size(), 0.0);
  for (uint32_t r = 0; r < kRows; ++r) {
    auto g = gradient(one_sgd_step(Format::F32, 1, 1), data.rows(r, 1));
    for (size_t i = 0; i < A.size(); ++i) A[i] += std::abs(g[i]) / kRows;
  }

  // Both runs share the forward pass and the 16-bit loss gradient row for
  // row (the scale 1024/M and 1/B are powers of two), and the GEMMs sum in
  // fp32. The large batch rounds its gradient G to the format once:
  // |error| <= u|G|. Accumulation rounds each micro-batch gradient G_m once
  // and adds them in fp32: |error| <= u sum_m |G_m| <= u A. So
  //   |big_i - acc_i| <= u (|big_i| + A_i) + slack,
  // slack: the fp32 sums (64 u32 A_i covers reordering over 32 rows and 8
  // adds), the 16-bit format's absolute floor at subnormals ((M + 1) half
  // subnormal units, unscaled by 1024), and A_i's own 16-bit-vs-fp32 error
  // (taken as 10%), and the fp32 rounding of w - lr g. Summing in the 16-bit buffer instead rounds every
  // partial sum: up to M roundings, which this bound does not allow.
  const double u = unit_roundoff(fmt), u32 = unit_roundoff(Format::F32);
  const double tiny = fmt == Format::F16 ? 0x1p-24 : fmt == Format::CB16 ? 0x1p-39 : fmt == Format::BF16 ? 0x1p-133 : 0;
  double worst = 0, gmax = 0, emax = 0;
  for (double g : big) gmax = std::max(gmax, std::abs(g));
  for (size_t i = 0; i < big.size(); ++i) {
    double bound = u * (std::abs(big[i]) + 1.1 * A[i]) + 64 * u32 * A[i] + (kMicro + 1) * tiny / 2 / 1024 +
                   2 * u32 / kLr;  // the master update's rounding, |w| <= 1
    double err = std::abs(big[i] - acc[i]);
    emax = std::max(emax, err);
    if (bound > 0) worst = std::max(worst, err / bound);
    EXPECT_LE(err, bound) << format_name(fmt) << " parameter " << i << ": large batch " << big[i]
                          << ", accumulated " << acc[i] << ", A " << A[i];
  }
  // The measurement for the record: the worst error as a fraction of the bound.
  std::printf("[ accumulation ] %s: worst |big - acc| / bound = %.3g, max |big - acc| = %.3g u max|g|\n",
              format_name(fmt), worst, emax / (u * gmax));
}

// The sharpest case: every row the same example, so all 8 micro-batch
// gradients are the same G/8 (up to fp32 noise). Summed in fp32,
// 8 fl(G/8) = fl(G) exactly (scaling by 8 is exact), so the result is
// the large batch's single rounding: |big - acc| <= u |big| (the two fp32
// sums may straddle a rounding boundary) plus fp32 slack. Summed in the
// 16-bit buffer, the partial sums 3G/8, 5G/8, 6G/8, 7G/8 are rounded
// too, and the error grows past one rounding.
TEST_P(GradAccumulation, IdenticalMicroBatchesSumWithoutExtraRounding) {
  const Format fmt = GetParam();
  auto one = data::HostData::classification(data::make_classification(1, 6, 3, 11));
  data::HostData data = one;
  for (uint32_t r = 1; r < kRows; ++r) {
    data.x.insert(data.x.end(), one.x.begin(), one.x.end());
    data.labels.push_back(one.labels[0]);
  }
  data.count = kRows;
  auto big = gradient(one_sgd_step(fmt, kRows, 1), data);
  auto acc = gradient(one_sgd_step(fmt, kRows / kMicro, kMicro), data);
  const double u = unit_roundoff(fmt), u32 = unit_roundoff(Format::F32);
  double worst = 0, gmax = 0;
  for (double g : big) gmax = std::max(gmax, std::abs(g));
  for (size_t i = 0; i < big.size(); ++i) {
    double err = std::abs(big[i] - acc[i]);
    worst = std::max(worst, err);
    EXPECT_LE(err, u * std::abs(big[i]) + 64 * u32 * std::abs(big[i]) + 2 * u32 / kLr)
        << format_name(fmt) << " parameter " << i << ": large batch " << big[i] << ", accumulated " << acc[i];
  }
  std::printf("[ accumulation ] %s identical micro-batches: max |big - acc| = %.3g u max|g|\n", format_name(fmt),
              worst / (u * gmax));
}

INSTANTIATE_TEST_SUITE_P(Formats, GradAccumulation,
                         ::testing::Values(Format::F32, Format::F16, Format::BF16, Format::CB16),
                         [](const auto& info) { return std::string(format_name(info.param)); });

}  // namespace
}  // namespace vkamp::test
