// Language-model data and losses: token windows from one stream (resident
// or streamed, bit for bit the same as the windows written out), labels at
// every position, and Evaluator::mean_loss against a double reference on
// the model's own logits, also with tokens that are no targets (a prompt's:
// read, not predicted), at 11 classes and at Qwen2's 151,936. The model is a tiny one without attention (an
// embedding, a LayerNorm and an lm_head), so only the data path is tested
// here; the GPT itself has its golden test.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "support/gpu_test.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

constexpr uint32_t kVocab = 11, kBlock = 7, kChannels = 8;

graph::Graph bigram_model(uint32_t vocab = kVocab) {
  graph::Graph g;
  g.input("idx", graph::Shape::tokens(kBlock));
  g.param("wte", {vocab, kChannels}, graph::Init::Normal, 0.5);
  g.param("wpe", {kBlock, kChannels}, graph::Init::Normal, 0.5);
  g.param("ln.weight", {kChannels}, graph::Init::One);
  g.param("ln.bias", {kChannels}, graph::Init::Zero);
  g.param("head.weight", {vocab, kChannels}, graph::Init::Normal, 0.5);
  g.embedding("embed", "idx", "wte", "wpe");
  g.layer_norm("ln", "embed", "ln.weight", "ln.bias");
  g.set_output(g.linear("head", "ln", "head.weight"));
  return g;
}

// A stream with structure to learn: mostly t+1 follows t.
std::vector<uint32_t> token_stream(size_t n, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<uint32_t> s(n);
  for (size_t i = 0; i < n; ++i) s[i] = i && gen() % 4 ? (s[i - 1] + 1) % kVocab : uint32_t(gen() % kVocab);
  return s;
}

config::TrainConfig lm_config(config::DataResidency where) {
  config::TrainConfig c;
  c.batch = 6;
  c.epochs = 2;
  c.seed = 5;
  c.optimizer.kind = config::OptimizerKind::AdamW;
  c.optimizer.lr = 0.01;
  c.scaler.histogram_interval = 0;
  c.data_on_gpu = where;
  return c;
}

struct LmRun {
  std::vector<float> losses, weights;
  bool resident = false;
};

LmRun train_on(const data::HostData& data, config::DataResidency where, uint32_t grad_accum = 1) {
  config::TrainConfig c = lm_config(where);
  c.grad_accum = grad_accum;
  train::Trainer t(ctx(), c, bigram_model(), train::LossKind::SoftmaxXent, data);
  LmRun r;
  t.on_step = [&](const train::StepMetrics& m) { r.losses.push_back(m.loss); };
  t.run();
  r.weights = t.model().read_master();
  r.resident = t.data_resident();
  return r;
}

TEST(HostDataWindows, CountAndRowsFollowTheStream) {
  std::vector<uint32_t> s(20);
  std::iota(s.begin(), s.end(), 0u);
  // Windows of 7 and their next token need 8 tokens: starts 0..12 at stride 1.
  data::HostData every = data::HostData::windows(s, 7, 1);
  EXPECT_EQ(every.count, 13u);
  EXPECT_EQ(every.labels_per_example(), 7u);
  // Stride 7: starts 0 and 7 (start 14 would need token 21).
  data::HostData tiles = data::HostData::windows(s, 7, 7);
  EXPECT_EQ(tiles.count, 2u);
  data::HostData r = tiles.rows(1, 1);
  ASSERT_EQ(r.x.size(), 7u);
  ASSERT_EQ(r.labels.size(), 7u);
  for (uint32_t t = 0; t < 7; ++t) {
    EXPECT_EQ(r.x[t], float(7 + t));
    EXPECT_EQ(r.labels[t], 8 + t);
  }
  const uint32_t picks[] = {12, 3};
  data::HostData sel = every.select(picks);
  EXPECT_EQ(sel.x[0], 12.0f);
  EXPECT_EQ(sel.labels[6], 19u);
  EXPECT_EQ(sel.x[7], 3.0f);
  EXPECT_EQ(data::HostData::windows(std::vector<uint32_t>(7), 7, 1).count, 0u) << "no room for the next token";
}

class LanguageModelData : public GpuTest {};

TEST_F(LanguageModelData, WindowsTrainBitForBitAsTheirRowsWrittenOut) {
  const data::HostData windows = data::HostData::windows(token_stream(200, 1), kBlock, 1);
  const data::HostData rows = windows.rows(0, windows.count);  // the same examples as x and labels
  const LmRun resident = train_on(windows, config::DataResidency::Always);
  const LmRun streamed = train_on(windows, config::DataResidency::Never);
  const LmRun written = train_on(rows, config::DataResidency::Always);
  const LmRun written_streamed = train_on(rows, config::DataResidency::Never);
  EXPECT_TRUE(resident.resident);
  EXPECT_FALSE(streamed.resident);
  ASSERT_FALSE(resident.losses.empty());
  EXPECT_EQ(resident.losses, streamed.losses);
  EXPECT_EQ(resident.losses, written.losses);
  EXPECT_EQ(resident.losses, written_streamed.losses);
  EXPECT_EQ(resident.weights, streamed.weights);
  EXPECT_EQ(resident.weights, written.weights);
  // It learned the stream's rule (t+1 follows t three times in four): the
  // loss fell well below ln(11) = 2.4.
  EXPECT_LT(resident.losses.back(), 1.8f);
}

TEST_F(LanguageModelData, MicroBatchesReadTheirOwnWindows) {
  const data::HostData windows = data::HostData::windows(token_stream(300, 2), kBlock, 1);
  const LmRun resident = train_on(windows, config::DataResidency::Always, 3);
  const LmRun streamed = train_on(windows, config::DataResidency::Never, 3);
  ASSERT_FALSE(resident.losses.empty());
  EXPECT_EQ(resident.losses, streamed.losses);
  EXPECT_EQ(resident.weights, streamed.weights);
}

// The mean cross-entropy over every position, from the model's own fp32
// logits in double: only the GPU's fp32 log-sum-exp and mean differ.
TEST_F(LanguageModelData, MeanLossIsTheMeanCrossEntropyOverEveryPosition) {
  const data::HostData val = data::HostData::windows(token_stream(120, 3), kBlock, kBlock);
  config::TrainConfig c = lm_config(config::DataResidency::Auto);
  c.precision = Format::F32;
  train::Trainer t(ctx(), c, bigram_model(), train::LossKind::SoftmaxXent,
                   data::HostData::windows(token_stream(200, 4), kBlock, 1));
  const data::HostData rows = val.rows(0, val.count);
  const std::vector<float> logits = t.predict(rows.x, rows.count);
  double sum = 0;
  for (size_t r = 0; r < rows.labels.size(); ++r) {
    const float* z = logits.data() + r * kVocab;
    double top = z[0], s = 0;
    for (uint32_t v = 0; v < kVocab; ++v) top = std::max(top, double(z[v]));
    for (uint32_t v = 0; v < kVocab; ++v) s += std::exp(z[v] - top);
    sum += top + std::log(s) - z[rows.labels[r]];
  }
  const double ref = sum / double(rows.labels.size());
  // Per position a log-sum-exp over 11 terms (a few u32 of the loss) and a
  // mean over the positions: 16 u32 relative is ample and still catches a
  // position or a window left out (1/119 and more).
  EXPECT_NEAR(t.mean_loss(val), ref, 16 * 0x1p-24 * ref + 1e-7);
  // Accuracy counts every position too.
  uint32_t correct = 0;
  for (size_t r = 0; r < rows.labels.size(); ++r) {
    const float* z = logits.data() + r * kVocab;
    correct += uint32_t(std::max_element(z, z + kVocab) - z) == rows.labels[r];
  }
  EXPECT_NEAR(t.evaluate(val), double(correct) / double(rows.labels.size()), 1e-12);
}

// The stream with about `share` of its tokens marked data::kNotTarget.
std::vector<uint32_t> with_prompts(std::vector<uint32_t> s, double share, uint64_t seed) {
  std::mt19937_64 gen(seed);
  for (uint32_t& t : s)
    if (std::bernoulli_distribution(share)(gen)) t |= data::kNotTarget;
  return s;
}

// The mean cross-entropy over the target positions of `rows`, in double
// from the logits, and the accuracy over them.
std::pair<double, double> target_reference(const data::HostData& rows, const std::vector<float>& logits,
                                           uint32_t vocab = kVocab) {
  double sum = 0, correct = 0, targets = 0;
  for (size_t r = 0; r < rows.labels.size(); ++r) {
    if (rows.labels[r] & data::kNotTarget) continue;
    const float* z = logits.data() + r * vocab;
    double top = z[0], s = 0;
    for (uint32_t v = 0; v < vocab; ++v) top = std::max(top, double(z[v]));
    for (uint32_t v = 0; v < vocab; ++v) s += std::exp(z[v] - top);
    sum += top + std::log(s) - z[rows.labels[r]];
    correct += uint32_t(std::max_element(z, z + vocab) - z) == rows.labels[r];
    ++targets;
  }
  return {sum / targets, correct / targets};
}

// Marked tokens are inputs by their ids (the rows written out carry no
// mark in x) and their labels count nowhere: the means are over the rest.
TEST_F(LanguageModelData, MeanLossAndAccuracyAreOverTheTargetsAlone) {
  const data::HostData val = data::HostData::windows(with_prompts(token_stream(120, 3), 0.4, 8), kBlock, kBlock);
  config::TrainConfig c = lm_config(config::DataResidency::Auto);
  c.precision = Format::F32;
  train::Trainer t(ctx(), c, bigram_model(), train::LossKind::SoftmaxXent,
                   data::HostData::windows(token_stream(200, 4), kBlock, 1));
  const data::HostData rows = val.rows(0, val.count);
  for (float id : rows.x) ASSERT_LT(id, float(kVocab)) << "a marked token reached x with its mark";
  const auto [loss, accuracy] = target_reference(rows, t.predict(rows.x, rows.count));
  EXPECT_NEAR(t.mean_loss(val), loss, 16 * 0x1p-24 * loss + 1e-7);
  EXPECT_NEAR(t.evaluate(val), accuracy, 1e-12);
}

// Training on a stream with marks: its first step's loss (the whole set in
// one batch) is the mean over the targets at the initial weights; the
// windows train bit for bit as their rows written out, resident or
// streamed; and the targets are learned.
TEST_F(LanguageModelData, TokensThatAreNoTargetsAreReadButNotLearned) {
  const data::HostData windows = data::HostData::windows(with_prompts(token_stream(200, 1), 0.3, 9), kBlock, 1);
  const data::HostData rows = windows.rows(0, windows.count);
  {
    config::TrainConfig c = lm_config(config::DataResidency::Always);
    c.precision = Format::F32;
    c.batch = windows.count;
    c.epochs = 1;
    train::Trainer t(ctx(), c, bigram_model(), train::LossKind::SoftmaxXent, windows);
    const double want = target_reference(rows, t.predict(rows.x, rows.count)).first;
    std::vector<float> losses;
    t.on_step = [&](const train::StepMetrics& m) { losses.push_back(m.loss); };
    t.run();
    ASSERT_EQ(losses.size(), 1u);
    EXPECT_NEAR(losses[0], want, 16 * 0x1p-24 * want + 1e-7);
  }
  const LmRun resident = train_on(windows, config::DataResidency::Always);
  const LmRun streamed = train_on(windows, config::DataResidency::Never);
  const LmRun written = train_on(rows, config::DataResidency::Always);
  ASSERT_FALSE(resident.losses.empty());
  EXPECT_EQ(resident.losses, streamed.losses);
  EXPECT_EQ(resident.losses, written.losses);
  EXPECT_EQ(resident.weights, streamed.weights);
  EXPECT_EQ(resident.weights, written.weights);
  EXPECT_LT(resident.losses.back(), 1.8f);
}

// At Qwen2's vocabulary (151,936), with ids over all of it (most above
// 65,535) and a third of the labels no targets: the evaluator's loss and
// accuracy, and the first training step's loss with the whole set in one
// batch (its logits, 280 rows, more than lavapipe's 128 MiB binding in
// fp32), against double computations on the logits read back. A row's
// log-sum-exp adds each 128th of its 151,936 terms in series on one
// invocation, then a tree: 1,194 + 40 (exp's ulps at logits within +-10) + a few u32 of the
// loss; the mean adds the rows (a few hundred u32 in all).
TEST_F(LanguageModelData, LossAndAccuracyAtARealVocabularyMatchTheLogits) {
  constexpr uint32_t kQwen2 = 151936;
  std::mt19937_64 gen(11);
  std::vector<uint32_t> stream(40 * kBlock + 1);
  for (uint32_t& t : stream) t = uint32_t(gen() % kQwen2) | (gen() % 3 == 0 ? data::kNotTarget : 0);
  const data::HostData set = data::HostData::windows(stream, kBlock, kBlock);
  const data::HostData rows = set.rows(0, set.count);
  config::TrainConfig c = lm_config(config::DataResidency::Auto);
  c.precision = Format::F32;
  c.batch = set.count;
  c.epochs = 1;
  train::Trainer t(ctx(), c, bigram_model(kQwen2), train::LossKind::SoftmaxXent, set);
  const auto [loss, accuracy] = target_reference(rows, t.predict(rows.x, rows.count), kQwen2);
  const double bound = (std::ceil(kQwen2 / 128.0) + 7 + 40 + 16) * 0x1p-24 * (1 + loss) + rows.labels.size() * 0x1p-24 * loss;
  EXPECT_GT(loss, 10.0) << "near ln 151936 = 11.9 for weights this small";
  EXPECT_NEAR(t.mean_loss(set), loss, bound);
  EXPECT_NEAR(t.evaluate(set), accuracy, 1e-12);
  std::vector<float> losses;
  t.on_step = [&](const train::StepMetrics& m) { losses.push_back(m.loss); };
  t.run();
  ASSERT_EQ(losses.size(), 1u);
  EXPECT_NEAR(losses[0], loss, bound);
}

TEST_F(LanguageModelData, LabelsOutsideTheVocabularyAreRejected) {
  std::vector<uint32_t> s = token_stream(50, 5);
  s[30] = kVocab;
  EXPECT_THROW(train::Trainer(ctx(), lm_config(config::DataResidency::Auto), bigram_model(),
                              train::LossKind::SoftmaxXent, data::HostData::windows(s, kBlock, 1)),
               vkamp::ConfigError);
}

}  // namespace
}  // namespace vkamp::test
