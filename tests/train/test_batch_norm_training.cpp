// BatchNorm in training: the running statistics against a CPU
// double reference of PyTorch's rule (momentum 0.1, the unbiased variance,
// num_batches_tracked), one update per micro-batch with --grad-accum; an
// overflowed step commits nothing (skip: the run's statistics are those of
// the applied batches only; retry: bit for bit those of the run that never
// overflowed); evaluation normalises with the running statistics; a
// resumed run is bit-exact, buffers included.
#include <cmath>
#include <filesystem>

#include "support/gpu_test.hpp"
#include "vkamp/data/dataset.hpp"
#include "vkamp/graph/graph.hpp"
#include "vkamp/ops/batch_norm.hpp"
#include "vkamp/train/epoch_order.hpp"
#include "vkamp/train/evaluator.hpp"
#include "vkamp/train/trainer.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::test {
namespace {

using config::TrainConfig;
using train::StepMetrics;
using train::Trainer;

constexpr uint32_t kFeatures = 5, kClasses = 3;

// x -> BatchNorm1d -> linear head: the batch statistics are those of the
// input rows, whatever the weights, so the reference needs only the data order.
graph::Graph bn_on_input() {
  graph::Graph g;
  g.input("x", graph::Shape::vector(kFeatures));
  g.batch_norm("bn", "x");
  g.param("head.weight", {kClasses, kFeatures});
  g.param("head.bias", {kClasses}, graph::Init::Zero);
  g.linear("head", "bn", "head.weight", "head.bias");
  g.set_output("head");
  return g;
}

// Features with offsets and spreads of their own, so mean and variance
// differ per channel.
data::HostData toy_data(uint32_t count, uint64_t seed) {
  data::HostData d = data::HostData::classification(data::make_classification(count, kFeatures, kClasses, seed));
  for (uint32_t r = 0; r < count; ++r)
    for (uint32_t f = 0; f < kFeatures; ++f) d.x[size_t(r) * kFeatures + f] = d.x[size_t(r) * kFeatures + f] * (1 + f) + 3.0f * f;
  return d;
}

TrainConfig config_for(Format fmt) {
  TrainConfig c;
  c.precision = fmt;
  c.batch = 8;
  c.epochs = 2;
  c.seed = 11;
  c.optimizer.lr = 0.05;
  c.optimizer.momentum = 0;
  c.scaler.histogram_interval = 0;
  return c;
}

std::vector<StepMetrics> run(Trainer& t) {
  std::vector<StepMetrics> out;
  t.on_step = [&](const StepMetrics& m) { out.push_back(m); };
  train::TrainSummary s = t.run();
  EXPECT_FALSE(s.failed) << s.failure;
  return out;
}

std::vector<float> buffer(const train::Model& m, const std::string& name) {
  const std::vector<float> all = m.read_buffers();
  for (const graph::ParamTensor& t : m.buffer_tensors())
    if (t.name == name) return {all.begin() + t.offset, all.begin() + t.offset + t.size};
  ADD_FAILURE() << "no buffer " << name;
  return {};
}

std::vector<float> master(const train::Model& m, const std::string& name) {
  const std::vector<float> all = m.read_master();
  for (const graph::ParamTensor& t : m.tensors())
    if (t.name == name) return {all.begin() + t.offset, all.begin() + t.offset + t.size};
  ADD_FAILURE() << "no parameter " << name;
  return {};
}

// PyTorch's update rule in double over the micro-batches `applied` (global
// micro-batch indices, in order), each with the rows the feeder gives it.
struct Reference {
  std::vector<double> mean = std::vector<double>(kFeatures, 0.0), var = std::vector<double>(kFeatures, 1.0);
  double tracked = 0;
};

Reference reference(const data::HostData& d, const TrainConfig& c, const std::vector<uint32_t>& applied) {
  Reference ref;
  train::EpochOrder order(d.count, c.seed);
  const uint32_t per_epoch = d.count / c.batch, n = c.batch;
  const double m = ops::kBatchNormMomentum;
  for (uint32_t b : applied) {
    const std::vector<uint32_t>& ids = order.of(b / per_epoch);
    for (uint32_t f = 0; f < kFeatures; ++f) {
      double sum = 0, sq = 0;
      for (uint32_t r = 0; r < n; ++r) sum += round_to(c.precision, d.x[size_t(ids[(b % per_epoch) * n + r]) * kFeatures + f]);
      const double mean = sum / n;
      for (uint32_t r = 0; r < n; ++r) {
        const double v = round_to(c.precision, d.x[size_t(ids[(b % per_epoch) * n + r]) * kFeatures + f]) - mean;
        sq += v * v;
      }
      ref.mean[f] = (1 - m) * ref.mean[f] + m * mean;
      ref.var[f] = (1 - m) * ref.var[f] + m * sq / (n - 1);  // unbiased
    }
    ref.tracked += 1;
  }
  return ref;
}

// The micro-batches the applied steps read: a record's cursor is past them.
std::vector<uint32_t> applied_micro_batches(const std::vector<StepMetrics>& steps, uint32_t micro_batches) {
  std::vector<uint32_t> out;
  for (const StepMetrics& s : steps)
    if (!s.skipped)
      for (uint32_t m = 0; m < micro_batches; ++m) out.push_back(s.cursor - micro_batches + m);
  return out;
}

void expect_matches(const train::Model& model, const Reference& ref) {
  const std::vector<float> mean = buffer(model, "bn.running_mean"), var = buffer(model, "bn.running_var");
  ASSERT_EQ(mean.size(), kFeatures);
  for (uint32_t f = 0; f < kFeatures; ++f) {
    EXPECT_NEAR(mean[f], ref.mean[f], 1e-5 * (1 + std::abs(ref.mean[f]))) << "channel " << f;
    EXPECT_NEAR(var[f], ref.var[f], 1e-5 * (1 + std::abs(ref.var[f]))) << "channel " << f;
  }
  EXPECT_EQ(buffer(model, "bn.num_batches_tracked"), std::vector<float>{float(ref.tracked)});
}

class BatchNormTraining : public GpuTest, public ::testing::WithParamInterface<Format> {};

// One update per micro-batch: --grad-accum 2 over 64 rows at batch 8 is 4
// steps an epoch and 8 updates of the running statistics.
TEST_P(BatchNormTraining, RunningStatisticsFollowPyTorchsRuleOncePerMicroBatch) {
  for (uint32_t accum : {1u, 2u}) {
    SCOPED_TRACE("grad_accum " + std::to_string(accum));
    TrainConfig c = config_for(GetParam());
    c.grad_accum = accum;
    const data::HostData d = toy_data(64, 3);
    Trainer t(ctx(), c, bn_on_input(), train::LossKind::SoftmaxXent, d);
    const std::vector<StepMetrics> steps = run(t);
    ASSERT_EQ(steps.size(), 2 * 64 / (8 * accum));
    const std::vector<uint32_t> batches = applied_micro_batches(steps, accum);
    ASSERT_EQ(batches.size(), 16u);
    expect_matches(t.model(), reference(d, c, batches));
  }
}

// A skipped step stages its statistics in the forward but commits none:
// the running statistics are those of the applied micro-batches alone (the
// skipped one's batch is consumed, so it is missing from the reference too).
TEST_P(BatchNormTraining, ASkippedStepLeavesTheRunningStatisticsAlone) {
  TrainConfig c = config_for(GetParam());
  c.inject_overflow = config::parse_step_ranges("2,5");
  const data::HostData d = toy_data(64, 4);
  Trainer t(ctx(), c, bn_on_input(), train::LossKind::SoftmaxXent, d);
  const std::vector<StepMetrics> steps = run(t);
  ASSERT_GT(steps.size(), 5u);
  EXPECT_TRUE(steps[2].skipped && steps[5].skipped);
  const std::vector<uint32_t> batches = applied_micro_batches(steps, 1);
  EXPECT_EQ(batches.size(), 16u);
  EXPECT_EQ(std::count(batches.begin(), batches.end(), 2u), 0) << "the skipped step's batch";
  expect_matches(t.model(), reference(d, c, batches));
}

INSTANTIATE_TEST_SUITE_P(Formats, BatchNormTraining, ::testing::Values(Format::F32, Format::F16),
                         [](const ::testing::TestParamInfo<Format>& i) { return std::string(format_name(i.param)); });

class BatchNormSteps : public GpuTest {};

// A retried step recomputes the same batch at half the scale; in fp32 the
// unscaled gradients are the same bits, so the run is the run that never
// overflowed, provided the failed attempt committed nothing: running
// statistics, counter and weights equal bit for bit. With --grad-accum 2,
// so both micro-batches' staged statistics are thrown away.
TEST_F(BatchNormSteps, ARetriedStepCommitsOnlyTheAcceptedAttemptBitForBit) {
  TrainConfig c = config_for(Format::F32);
  c.grad_accum = 2;
  c.scaler.policy = config::OverflowPolicy::Retry;
  c.scaler.initial_loss_scale = 1024;
  const data::HostData d = toy_data(64, 5);
  Trainer clean(ctx(), c, bn_on_input(), train::LossKind::SoftmaxXent, d);
  run(clean);
  c.inject_overflow = config::parse_step_ranges("2");
  Trainer retried(ctx(), c, bn_on_input(), train::LossKind::SoftmaxXent, d);
  const std::vector<StepMetrics> steps = run(retried);
  ASSERT_GT(steps.size(), 3u);
  ASSERT_TRUE(steps[2].overflow);
  ASSERT_EQ(steps[3].retries, 1u) << "step 3 is step 2's retry";
  EXPECT_EQ(steps[3].loss_scale, 512.0f);
  EXPECT_EQ(retried.model().read_buffers(), clean.model().read_buffers());
  EXPECT_EQ(retried.model().read_master(), clean.model().read_master());
  EXPECT_EQ(buffer(retried.model(), "bn.num_batches_tracked"), std::vector<float>{16.0f});
}

// Evaluation (and so vkamp-predict) normalises with the running statistics
// and the fp32 masters: the outputs against the CPU from the buffers.
TEST_F(BatchNormSteps, EvaluationNormalisesWithTheRunningStatistics) {
  TrainConfig c = config_for(Format::F32);
  const data::HostData d = toy_data(64, 6);
  Trainer t(ctx(), c, bn_on_input(), train::LossKind::SoftmaxXent, d);
  run(t);
  const train::Model& m = t.model();
  const std::vector<float> mean = buffer(m, "bn.running_mean"), var = buffer(m, "bn.running_var");
  const std::vector<float> w = master(m, "bn.weight"), b = master(m, "bn.bias");
  const std::vector<float> hw = master(m, "head.weight"), hb = master(m, "head.bias");
  train::Evaluator ev(ctx(), t.model(), train::LossKind::SoftmaxXent, c.batch);
  const uint32_t rows = 13;  // a partial last batch too
  const std::vector<float> got = ev.predict(std::vector<float>(d.x.begin(), d.x.begin() + rows * kFeatures), rows);
  ASSERT_EQ(got.size(), rows * kClasses);
  double batch_mean0 = 0;
  for (uint32_t r = 0; r < rows; ++r) {
    batch_mean0 += d.x[size_t(r) * kFeatures] / rows;
    for (uint32_t k = 0; k < kClasses; ++k) {
      double z = hb[k];
      for (uint32_t f = 0; f < kFeatures; ++f) {
        const double xhat = (d.x[size_t(r) * kFeatures + f] - mean[f]) / std::sqrt(double(var[f]) + ops::kBatchNormEps);
        z += hw[size_t(k) * kFeatures + f] * (xhat * w[f] + b[f]);
      }
      EXPECT_NEAR(got[size_t(r) * kClasses + k], z, 1e-4 * (1 + std::abs(z))) << "row " << r << " class " << k;
    }
  }
  // The running mean is far from this batch's: the check tells them apart.
  EXPECT_GT(std::abs(batch_mean0 - mean[0]), 0.1);
}

// Interrupted and resumed: the buffers (and the weights) are those of the
// straight run, bit for bit; the checkpoint carries them.
TEST_F(BatchNormSteps, ResumeIsBitExactBuffersIncluded) {
  auto dir = std::filesystem::temp_directory_path() / ("vkamp-bn-resume-" + std::to_string(vkamp::platform::process_id()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "ck.bin").string();
  TrainConfig c = config_for(Format::F16);
  c.epochs = 4;
  c.inject_overflow = config::parse_step_ranges("3");
  const data::HostData d = toy_data(64, 7);
  Trainer full(ctx(), c, bn_on_input(), train::LossKind::SoftmaxXent, d);
  run(full);
  TrainConfig first = c;
  first.epochs = 2;
  first.checkpoint_path = path;
  {
    Trainer t(ctx(), first, bn_on_input(), train::LossKind::SoftmaxXent, d);
    run(t);
  }
  TrainConfig second = c;
  second.checkpoint_path = path;
  second.resume = true;
  Trainer resumed(ctx(), second, bn_on_input(), train::LossKind::SoftmaxXent, d);
  ASSERT_FALSE(run(resumed).empty());
  EXPECT_EQ(resumed.model().read_buffers(), full.model().read_buffers());
  EXPECT_EQ(resumed.model().read_master(), full.model().read_master());
  EXPECT_EQ(buffer(resumed.model(), "bn.num_batches_tracked"), std::vector<float>{32.0f});
  std::filesystem::remove_all(dir);
}

// A conv-BN-ReLU net from a model string learns, and its statistics stay
// finite with one update per applied step.
TEST_F(BatchNormSteps, ConvBatchNormModelStringTrains) {
  TrainConfig c = config_for(Format::F16);
  c.epochs = 6;
  c.optimizer.lr = 0.1;
  const data::HostData d = data::HostData::classification(data::make_classification(64, 36, kClasses, 8));
  Trainer t(ctx(), c, models::parse_model("6x6x1-c4k3p1-bnr-m2-f-3"), train::LossKind::SoftmaxXent, d);
  const std::vector<StepMetrics> steps = run(t);
  ASSERT_EQ(steps.size(), 48u);
  EXPECT_LT(steps.back().loss, steps.front().loss);
  for (float v : t.model().read_buffers()) EXPECT_TRUE(std::isfinite(v));
  EXPECT_EQ(buffer(t.model(), "bn1.num_batches_tracked"), std::vector<float>{48.0f});
  EXPECT_GT(t.evaluate(d), 0.5);
}

}  // namespace
}  // namespace vkamp::test
