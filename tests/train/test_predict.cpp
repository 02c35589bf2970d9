// Trainer::predict: the model's outputs for any number of rows, batched
// through the model's max rows; checked bit for bit against the model's
// forward pass on each batch, and through the arg-max against evaluate().
#include <cstring>

#include "support/gpu_test.hpp"
#include "vkamp/error.hpp"
#include "vkamp/data/dataset.hpp"
#include "vkamp/train/evaluator.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

using train::Trainer;

constexpr uint32_t kBatch = 8, kFeatures = 6, kClasses = 3;

config::TrainConfig small_config() {
  config::TrainConfig c;
  c.batch = kBatch;
  c.epochs = 2;
  c.seed = 3;
  c.optimizer.lr = 0.1;
  c.scaler.histogram_interval = 0;
  return c;
}

data::HostData toy(uint32_t count, uint64_t seed) {
  return data::HostData::classification(data::make_classification(count, kFeatures, kClasses, seed));
}

// The model's forward pass on rows [first, first + n) of x, n <= kBatch.
std::vector<float> forward(Trainer& t, const std::vector<float>& x, uint32_t first, uint32_t n) {
  train::Model& model = t.model();
  std::vector<float> rows(x.begin() + size_t(first) * kFeatures, x.begin() + size_t(first + n) * kFeatures);
  auto bytes = pack(model.format(), rows);
  Buffer in(ctx(), bytes.size());
  in.write(bytes.data(), bytes.size());
  Sequence seq(ctx());
  seq.begin();
  model.record_forward(seq, in, n);
  seq.end();
  seq.run();
  std::vector<uint8_t> out(size_t(n) * kClasses * format_bytes(model.format()));
  model.output().read(out.data(), out.size());
  return unpack(model.format(), out);
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

class TrainingPredict : public GpuTest {};

TEST_F(TrainingPredict, AnyNumberOfRowsMatchesTheForwardPassBatchByBatch) {
  Trainer t(ctx(), small_config(), models::parse_model("6-5t-3"), train::LossKind::SoftmaxXent, toy(64, 1));
  t.run();
  const data::HostData held_out = toy(3 * kBatch + 7, 2);
  for (uint32_t rows : {0u, 1u, kBatch - 1, kBatch, kBatch + 1, 3 * kBatch + 7}) {
    std::vector<float> x(held_out.x.begin(), held_out.x.begin() + size_t(rows) * kFeatures);
    std::vector<float> y = t.predict(x, rows);
    ASSERT_EQ(y.size(), size_t(rows) * kClasses) << rows << " rows";
    for (uint32_t first = 0; first < rows; first += kBatch) {
      const uint32_t n = std::min(kBatch, rows - first);
      std::vector<float> want = forward(t, x, first, n);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_TRUE(same_bits(y[size_t(first) * kClasses + i], want[i]))
            << rows << " rows: output " << first * kClasses + i << " is " << y[first * kClasses + i]
            << ", the forward pass gave " << want[i];
    }
  }
}

TEST_F(TrainingPredict, ArgMaxAccuracyEqualsEvaluate) {
  const data::HostData all = toy(64 + 3 * kBatch + 7, 4), held_out = all.rows(64, 3 * kBatch + 7);
  Trainer t(ctx(), small_config(), models::parse_model("6-5t-3"), train::LossKind::SoftmaxXent, all.rows(0, 64));
  t.run();
  std::vector<float> y = t.predict(held_out.x, held_out.count);
  uint32_t correct = 0;
  for (uint32_t r = 0; r < held_out.count; ++r) {
    uint32_t best = 0;  // ties go to the lower class, as in accuracy.comp
    for (uint32_t c = 1; c < kClasses; ++c)
      if (y[r * kClasses + c] > y[r * kClasses + best]) best = c;
    correct += best == held_out.labels[r];
  }
  const double accuracy = double(correct) / held_out.count;
  EXPECT_EQ(accuracy, t.evaluate(held_out));
  EXPECT_GT(accuracy, 0.5) << "the toy problem is learnable: 2 epochs should beat chance (1/3)";
}

// The toy classes as regression targets: one-hot rows, no labels.
void as_one_hot_targets(data::HostData& d) {
  for (uint32_t l : d.labels)
    for (uint32_t c = 0; c < kClasses; ++c) d.targets.push_back(c == l ? 1.0f : 0.0f);
  d.labels.clear();
}

// Sets are uploaded a chunk at a time (so they need not fit the device): a
// chunk of 2 batches gives the bits of the one-chunk run, and the same
// accuracy and mean squared error.
TEST_F(TrainingPredict, ChunkedUploadsGiveTheSameResults) {
  for (auto loss : {train::LossKind::SoftmaxXent, train::LossKind::MSE}) {
    data::HostData data = toy(64, 7), held_out = toy(5 * kBatch + 3, 8);
    if (loss == train::LossKind::MSE) {
      as_one_hot_targets(data);
      as_one_hot_targets(held_out);
    }
    Trainer t(ctx(), small_config(), models::parse_model("6-5t-3"), loss, data);
    t.run();
    const size_t two_batches = 2 * kBatch * kFeatures * format_bytes(t.model().format());
    train::Evaluator chunked(ctx(), t.model(), loss, kBatch, two_batches);
    const std::vector<float> whole = t.predict(held_out.x, held_out.count);
    const std::vector<float> parts = chunked.predict(held_out.x, held_out.count);
    ASSERT_EQ(whole.size(), parts.size());
    for (size_t i = 0; i < whole.size(); ++i) ASSERT_TRUE(same_bits(whole[i], parts[i])) << "output " << i;
    EXPECT_DOUBLE_EQ(t.evaluate(held_out), chunked.evaluate(held_out));
  }
}

// With a progress callback the evaluation is submitted in parts: the
// callback sees the rows done grow to the whole set, and the results are
// those of one submission (scores() is evaluate() and mean_loss() at once).
TEST_F(TrainingPredict, EvaluationInPartsReportsProgressAndGivesTheSameResults) {
  for (auto loss : {train::LossKind::SoftmaxXent, train::LossKind::MSE}) {
    data::HostData data = toy(64, 9), held_out = toy(41 * kBatch + 5, 10);
    if (loss == train::LossKind::MSE) {
      as_one_hot_targets(data);
      as_one_hot_targets(held_out);
    }
    Trainer t(ctx(), small_config(), models::parse_model("6-5t-3"), loss, data);
    t.run();
    train::Evaluator watched(ctx(), t.model(), loss, kBatch);
    std::vector<std::pair<uint64_t, uint64_t>> calls;
    watched.on_progress = [&](uint64_t done, uint64_t total) { calls.push_back({done, total}); };
    const train::Evaluator::Scores sc = watched.scores(held_out);
    ASSERT_GE(calls.size(), 10u) << "a few dozen parts";
    for (size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(calls[i].second, held_out.count);
      if (i) {
        EXPECT_GT(calls[i].first, calls[i - 1].first);
      }
    }
    EXPECT_EQ(calls.back().first, held_out.count);
    EXPECT_DOUBLE_EQ(sc.accuracy, t.evaluate(held_out));
    EXPECT_NEAR(sc.loss, t.mean_loss(held_out), 1e-9);
  }
}

TEST_F(TrainingPredict, RejectsInputsOfTheWrongSize) {
  Trainer t(ctx(), small_config(), models::parse_model("6-5t-3"), train::LossKind::SoftmaxXent, toy(64, 6));
  EXPECT_THROW(t.predict(std::vector<float>(kFeatures * 2 + 1), 2), Error);
  EXPECT_TRUE(t.predict({}, 0).empty());
}

}  // namespace
}  // namespace vkamp::test
