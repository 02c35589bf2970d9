// Dropout in training: a run with dropout that is interrupted and resumed
// from its checkpoint takes the same steps bit for bit as one straight
// through (the draws come from the seed and the step number the checkpoint
// already keeps); dropout changes the training loss but not evaluation
// (the identity there); nanoGPT's dropout places in the GPT graph.

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "support/gpu_test.hpp"
#include "tiny_model.hpp"
#include "vkamp/models/gpt.hpp"
#include "vkamp/train/trainer.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::test {
namespace {

using config::TrainConfig;
using train::Trainer;

// The tiny problem, trained with AdamW (what nanoGPT trains with).
TrainConfig dropout_config() {
  TrainConfig c = tiny_config();
  c.seed = 11;
  c.optimizer.kind = config::OptimizerKind::AdamW;
  c.optimizer.lr = 0.01;
  return c;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class DropoutTraining : public GpuTest {};

TEST_F(DropoutTraining, ResumeFromACheckpointIsBitExact) {
  const auto dir = std::filesystem::temp_directory_path() / ("vkamp-dropout-" + std::to_string(vkamp::platform::process_id()));
  std::filesystem::create_directories(dir);
  const StraightAndResumed r = run_straight_and_resumed(ctx(), dropout_config(), models::parse_model("6-16t-d0.3-3"),
                                                        tiny_data(64, 41), 2, (dir / "ck.bin").string());
  ASSERT_FALSE(r.rest.empty());
  const size_t k = r.rest[0].step;
  ASSERT_GT(k, 0u);
  ASSERT_EQ(k + r.rest.size(), r.full.size());
  for (size_t i = 0; i < r.rest.size(); ++i) EXPECT_EQ(r.rest[i].loss, r.full[k + i].loss) << "step " << k + i;
  EXPECT_TRUE(same_bits(r.rest_weights, r.full_weights)) << "the resumed run's weights differ";
  std::filesystem::remove_all(dir);
}

TEST_F(DropoutTraining, ChangesTheTrainingLossButNotEvaluation) {
  const auto data = tiny_data(64, 41);
  TrainConfig c = dropout_config();
  c.epochs = 1;
  // The same parameters (dropout has none, so the seeded start is the same).
  Trainer with(ctx(), c, models::parse_model("6-16t-d0.5-3"), train::LossKind::SoftmaxXent, data);
  Trainer without(ctx(), c, models::parse_model("6-16t-3"), train::LossKind::SoftmaxXent, data);
  ASSERT_TRUE(same_bits(with.model().read_master(), without.model().read_master()));
  EXPECT_EQ(with.evaluate(data), without.evaluate(data)) << "evaluation must not drop anything";
  const auto a = run_steps(with), b = run_steps(without);
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
