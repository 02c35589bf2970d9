// Where the training set lives: streamed from host memory through the
// staging ring or resident on the GPU, the same batches in the same order,
// bit for bit, with no host wait in steady state; per-epoch orders that
// never repeat; resume at the same example whatever the residency.
#include <filesystem>
#include <set>

#include "support/gpu_test.hpp"
#include "vkamp/data/dataset.hpp"
#include "vkamp/train/epoch_order.hpp"
#include "vkamp/train/trainer.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::test {
namespace {

using config::DataResidency;
using train::StepMetrics;
using config::TrainConfig;
using train::Trainer;

const models::ModelSpec kModel = models::parse_model("6-5t-3");

data::HostData toy_data(uint32_t count, uint64_t seed) {
  return data::HostData::classification(data::make_classification(count, 6, 3, seed));
}

TrainConfig base_config(DataResidency where) {
  TrainConfig c;
  c.batch = 8;
  c.epochs = 3;
  c.seed = 11;
  c.optimizer.lr = 0.1;
  c.scaler.histogram_interval = 0;
  c.data_on_gpu = where;
  return c;
}

struct RunResult {
  std::vector<StepMetrics> steps;
  std::vector<float> weights;
  train::TrainSummary summary;
  bool resident = false;
  uint64_t device_bytes = 0;
};

RunResult train_once(Context& ctx, const TrainConfig& c, const data::HostData& data) {
  RunResult r;
  Trainer t(ctx, c, kModel, train::LossKind::SoftmaxXent, data);
  t.on_step = [&](const StepMetrics& m) { r.steps.push_back(m); };
  r.summary = t.run();
  r.weights = t.model().read_master();
  r.resident = t.data_resident();
  r.device_bytes = t.data_device_bytes();
  return r;
}

void expect_same_run(const RunResult& a, const RunResult& b) {
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].loss, b.steps[i].loss) << "step " << i;
    EXPECT_EQ(a.steps[i].loss_scale, b.steps[i].loss_scale) << "step " << i;
    EXPECT_EQ(a.steps[i].cursor, b.steps[i].cursor) << "step " << i;
  }
  EXPECT_EQ(a.weights, b.weights);
}

class Streaming : public GpuTest {};

TEST(EpochOrder, EveryEpochIsASeededPermutationAndNoneRepeats) {
  train::EpochOrder order(50, 3), again(50, 3), other_seed(50, 4);
  std::set<std::vector<uint32_t>> seen;
  for (uint32_t e = 0; e < 200; ++e) {
    const std::vector<uint32_t> p = order.of(e);
    std::vector<uint32_t> sorted = p;
    std::sort(sorted.begin(), sorted.end());
    for (uint32_t i = 0; i < 50; ++i) ASSERT_EQ(sorted[i], i) << "epoch " << e << " is not a permutation";
    EXPECT_EQ(p, again.of(e)) << "epoch " << e << " differs for the same seed";
    EXPECT_NE(p, other_seed.of(e)) << "epoch " << e;
    seen.insert(p);
  }
  EXPECT_EQ(seen.size(), 200u) << "an epoch's order repeated";
  // Asking for an earlier epoch again recomputes the same order.
  EXPECT_EQ(order.of(7), again.of(7));
}

// The staging window under every way the cursor moves: skipped steps
// consume their batches, retried steps recompute the same ones, and three
// micro-batches per step cross epoch ends mid-step.
TEST_F(Streaming, StreamedAndResidentRunsAreBitIdentical) {
  const auto data = toy_data(100, 5);  // 12 micro-batches per epoch
  for (auto policy : {config::OverflowPolicy::Skip, config::OverflowPolicy::Retry}) {
    TrainConfig c = base_config(DataResidency::Always);
    c.grad_accum = 3;
    c.epochs = 5;
    c.scaler.policy = policy;
    c.inject_overflow = config::parse_step_ranges("2,5-7,11");
    const RunResult resident = train_once(ctx(), c, data);
    c.data_on_gpu = DataResidency::Never;
    const RunResult streamed = train_once(ctx(), c, data);
    ASSERT_TRUE(resident.resident);
    ASSERT_FALSE(streamed.resident);
    SCOPED_TRACE(config::policy_name(policy));
    expect_same_run(resident, streamed);
  }
}

// A set larger than the memory budget (standing in for a set larger than
// the device) streams, and takes only the staging ring on the device.
TEST_F(Streaming, AutoStreamsASetLargerThanItsBudget) {
  const auto data = toy_data(4000, 6);
  TrainConfig c = base_config(DataResidency::Auto);
  c.epochs = 1;
  c.data_budget_mb = 0.05;  // the set is 4000 x (6 x 2 + 4) bytes = 62.5 KiB
  const RunResult streamed = train_once(ctx(), c, data);
  EXPECT_FALSE(streamed.resident);
  EXPECT_LT(streamed.device_bytes, 4000u * 16 / 10) << "the staging ring should be a small part of the set";
  EXPECT_EQ(streamed.summary.host_waits_in_loop, 0u);
  c.data_budget_mb = 1;
  const RunResult resident = train_once(ctx(), c, data);
  EXPECT_TRUE(resident.resident);
  EXPECT_EQ(resident.device_bytes, 4000u * 16);
  expect_same_run(resident, streamed);
}

TEST_F(Streaming, StreamedStepsNeverBlockOnTheGpu) {
  const auto data = toy_data(256, 17);
  TrainConfig c = base_config(DataResidency::Never);
  c.epochs = 2;  // 64 steps, 3 in flight
  const RunResult r = train_once(ctx(), c, data);
  EXPECT_EQ(r.summary.applied, 64u);
  EXPECT_EQ(r.summary.host_waits_in_loop, 0u);
}

// With a learning rate of 0 each step's loss depends on its batch alone:
// epoch 64 must see batches other than epoch 0's (the order used to repeat
// every 64 epochs).
TEST_F(Streaming, OrdersDoNotRepeatAfter64Epochs) {
  const auto data = toy_data(32, 8);  // 4 steps per epoch
  TrainConfig c = base_config(DataResidency::Always);
  c.optimizer.lr = 0;
  c.epochs = 66;
  const RunResult r = train_once(ctx(), c, data);
  ASSERT_EQ(r.steps.size(), 66u * 4);
  bool differs = false;
  for (uint32_t i = 0; i < 4; ++i) differs |= r.steps[i].loss != r.steps[64 * 4 + i].loss;
  EXPECT_TRUE(differs) << "epoch 64 replayed epoch 0's batches";
}

// A checkpoint written by a resident run resumes streamed (and the other
// way) at the same example, bit for bit.
TEST_F(Streaming, ResumeContinuesAtTheSameExampleWhateverTheResidency) {
  auto dir = std::filesystem::temp_directory_path() / ("vkamp-stream-resume-" + std::to_string(vkamp::platform::process_id()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "ck.bin").string();
  const auto data = toy_data(100, 9);
  for (auto [first, second] : {std::pair{DataResidency::Always, DataResidency::Never},
                               std::pair{DataResidency::Never, DataResidency::Always}}) {
    TrainConfig c = base_config(second);
    c.grad_accum = 2;
    c.epochs = 4;
    const RunResult full = train_once(ctx(), c, data);
    TrainConfig part = base_config(first);
    part.grad_accum = 2;
    part.epochs = 2;
    part.checkpoint_path = path;
    train_once(ctx(), part, data);
    TrainConfig rest = c;
    rest.checkpoint_path = path;
    rest.resume = true;
    const RunResult resumed = train_once(ctx(), rest, data);
    ASSERT_FALSE(resumed.steps.empty());
    const size_t k = resumed.steps[0].step;
    ASSERT_EQ(k + resumed.steps.size(), full.steps.size());
    for (size_t i = 0; i < resumed.steps.size(); ++i) {
      EXPECT_EQ(resumed.steps[i].loss, full.steps[k + i].loss) << "step " << k + i;
      EXPECT_EQ(resumed.steps[i].cursor, full.steps[k + i].cursor) << "step " << k + i;
    }
    EXPECT_EQ(resumed.weights, full.weights);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vkamp::test
