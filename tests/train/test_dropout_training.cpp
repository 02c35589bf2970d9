// Dropout in training: a run with dropout that is interrupted and resumed
// from its checkpoint takes the same steps bit for bit as one straight
// through (the draws come from the seed and the step number the checkpoint
// already keeps); dropout changes the training loss but not evaluation
// (the identity there); nanoGPT's dropout places in the GPT graph.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "support/gpu_test.hpp"
#include "vkamp/data/dataset.hpp"
#include "vkamp/models/gpt.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

using config::TrainConfig;
using train::StepMetrics;
using train::Trainer;

data::HostData toy_data() {
  return data::HostData::classification(data::make_classification(64, 6, 3, 41));
}

TrainConfig toy_config() {
  TrainConfig c;
  c.precision = Format::F16;
  c.batch = 8;
  c.epochs = 4;
  c.seed = 11;
  c.optimizer.kind = config::OptimizerKind::AdamW;
  c.optimizer.lr = 0.01;
  c.scaler.histogram_interval = 0;
  return c;
}

std::vector<StepMetrics> run(Trainer& t) {
  std::vector<StepMetrics> out;
  t.on_step = [&](const StepMetrics& m) { out.push_back(m); };
  t.run();
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class DropoutTraining : public GpuTest {};

TEST_F(DropoutTraining, ResumeFromACheckpointIsBitExact) {
  const auto dir = std::filesystem::temp_directory_path() / ("vkamp-dropout-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "ck.bin").string();
  const auto data = toy_data();
  const models::ModelSpec spec = models::parse_model("6-16t-d0.3-3");
  const TrainConfig c = toy_config();
  std::vector<StepMetrics> full;
  std::vector<float> full_weights;
  {
    Trainer t(ctx(), c, spec, train::LossKind::SoftmaxXent, data);
    full = run(t);
    full_weights = t.model().read_master();
  }
  TrainConfig first = c;
  first.epochs = 2;
  first.checkpoint_path = path;
  {
    Trainer t(ctx(), first, spec, train::LossKind::SoftmaxXent, data);
    run(t);
  }
  TrainConfig second = c;
  second.checkpoint_path = path;
  second.resume = true;
  Trainer t(ctx(), second, spec, train::LossKind::SoftmaxXent, data);
  const auto rest = run(t);
  ASSERT_FALSE(rest.empty());
  const size_t k = rest[0].step;
  ASSERT_GT(k, 0u);
  ASSERT_EQ(k + rest.size(), full.size());
  for (size_t i = 0; i < rest.size(); ++i) EXPECT_EQ(rest[i].loss, full[k + i].loss) << "step " << k + i;
  EXPECT_TRUE(same_bits(t.model().read_master(), full_weights)) << "the resumed run's weights differ";
  std::filesystem::remove_all(dir);
}

TEST_F(DropoutTraining, ChangesTheTrainingLossButNotEvaluation) {
  const auto data = toy_data();
  TrainConfig c = toy_config();
  c.epochs = 1;
  // The same parameters (dropout has none, so the seeded start is the same).
  Trainer with(ctx(), c, models::parse_model("6-16t-d0.5-3"), train::LossKind::SoftmaxXent, data);
  Trainer without(ctx(), c, models::parse_model("6-16t-3"), train::LossKind::SoftmaxXent, data);
  ASSERT_TRUE(same_bits(with.model().read_master(), without.model().read_master()));
  EXPECT_EQ(with.evaluate(data), without.evaluate(data)) << "evaluation must not drop anything";
  const auto a = run(with), b = run(without);
  ASSERT_FALSE(a.empty());
  ASSERT_EQ(a.size(), b.size());
  EXPECT_NE(a[0].loss, b[0].loss) << "half the hidden values dropped left the first loss unchanged";
}

TEST(GptDropout, SitsWhereNanoGptPutsIt) {
  models::GptConfig c;
  c.vocab_size = 16;
  c.n_layer = 2;
  auto dropouts = [](const graph::Graph& g) {
    std::vector<std::string> names;
    for (const graph::Node& n : g.nodes())
      if (n.op == "dropout") names.push_back(n.name + "@" + std::to_string(n.attrs.p));
    return names;
  };
  EXPECT_TRUE(dropouts(models::gpt_graph(c)).empty()) << "dropout 0 adds no nodes (the same graph as before)";
  c.dropout = 0.2;
  const std::string p = "@" + std::to_string(0.2);
  EXPECT_EQ(dropouts(models::gpt_graph(c)),
            (std::vector<std::string>{"transformer.drop" + p, "transformer.h.0.attn.resid_dropout" + p,
                                      "transformer.h.0.mlp.dropout" + p, "transformer.h.1.attn.resid_dropout" + p,
                                      "transformer.h.1.mlp.dropout" + p}));
}

}  // namespace
}  // namespace vkamp::test
