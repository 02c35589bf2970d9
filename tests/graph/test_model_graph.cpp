// Model strings compile to graphs whose parameters keep the names, offsets
// and sizes of the sequential model (the numbers below are the layout the
// sequential Model had; checkpoints and PyTorch exports depend on them).
#include <gtest/gtest.h>

#include "vkamp/graph/param_layout.hpp"
#include "vkamp/models/model_spec.hpp"

namespace vkamp::test {
namespace {

struct Expected {
  const char* name;
  uint32_t offset, size;
};

void expect_layout(const std::string& model, const std::vector<Expected>& want, uint32_t total) {
  uint32_t padded = 0;
  auto got = graph::layout_params(models::build_graph(models::parse_model(model)), &padded);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].name, want[i].name);
    EXPECT_EQ(got[i].offset, want[i].offset) << want[i].name;
    EXPECT_EQ(got[i].size, want[i].size) << want[i].name;
  }
  EXPECT_EQ(padded, total);
}

TEST(ModelGraph, MlpKeepsItsLayout) {
  expect_layout("784-256r-256r-10",
                {{"fc1.weight", 0, 200704}, {"fc1.bias", 200704, 256}, {"fc2.weight", 200960, 65536},
                 {"fc2.bias", 266496, 256}, {"fc3.weight", 266752, 2560}, {"fc3.bias", 269312, 10}},
                269440);
}

TEST(ModelGraph, LeNetKeepsItsLayout) {
  expect_layout("28x28x1-c6k5p2r-m2-c16k5r-m2-f-120r-84r-10",
                {{"conv1.weight", 0, 150}, {"conv1.bias", 256, 6}, {"conv2.weight", 384, 2400},
                 {"conv2.bias", 2816, 16}, {"fc1.weight", 2944, 48000}, {"fc1.bias", 50944, 120},
                 {"fc2.weight", 51072, 10080}, {"fc2.bias", 61184, 84}, {"fc3.weight", 61312, 840},
                 {"fc3.bias", 62208, 10}},
                62336);
}

TEST(ModelGraph, LeNetNodesFollowTheLayers) {
  auto g = models::build_graph(models::parse_model("28x28x1-c6k5p2r-m2-c16k5r-m2-f-120r-84r-10"));
  std::vector<std::string> names;
  for (const auto& n : g.nodes()) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"conv1", "conv1.act", "pool1", "conv2", "conv2.act", "pool2",
                                             "flatten1", "fc1", "fc1.act", "fc2", "fc2.act", "fc3"}));
  EXPECT_EQ(g.output_tensor().name, "fc3");
  EXPECT_EQ(g.tensor("pool2").shape, graph::Shape::picture(5, 5, 16));
}

}  // namespace
}  // namespace vkamp::test
