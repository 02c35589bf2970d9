// The model string: MLP and image syntax, the shapes it implies, the
// canonical describe() round trip, and the ConfigError for each kind of bad
// spec. Host only, no GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "vkamp/config/train_config.hpp"
#include "vkamp/models/model_spec.hpp"

namespace vkamp::models {
namespace {

std::string error_of(const std::string& model) {
  try {
    parse_model(model);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "\"" << model << "\" was accepted";
  return "";
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "in: " << (haystack)

TEST(ModelSpec, MlpStringsKeepTheirMeaning) {
  ModelSpec s = parse_model("784-256r-256g-64t-10");
  EXPECT_EQ(s.input, (Shape{1, 1, 784, false}));
  EXPECT_EQ(s.inputs(), 784u);
  ASSERT_EQ(s.layers.size(), 4u);
  for (auto& l : s.layers) EXPECT_EQ(l.kind, LayerKind::Linear);
  EXPECT_EQ(s.layers[0].out, 256u);
  EXPECT_TRUE(s.layers[0].activate);
  EXPECT_EQ(s.layers[0].act, ops::Activation::ReLU);
  EXPECT_EQ(s.layers[1].act, ops::Activation::GELU);
  EXPECT_EQ(s.layers[2].act, ops::Activation::Tanh);
  EXPECT_FALSE(s.layers[3].activate);
  EXPECT_EQ(describe(s), "784-256r-256g-64t-10");
  EXPECT_EQ(layer_shapes(s).back(), (Shape{1, 1, 10, false}));
}

TEST(ModelSpec, LeNet5ShapesFollowTheLayers) {
  ModelSpec s = parse_model("28x28x1-c6k5p2r-m2-c16k5r-m2-f-120r-84r-10");
  EXPECT_EQ(s.input, (Shape{28, 28, 1, true}));
  ASSERT_EQ(s.layers.size(), 8u);
  const LayerSpec& c1 = s.layers[0];
  EXPECT_EQ(c1.kind, LayerKind::Conv2d);
  EXPECT_EQ(c1.out, 6u);
  EXPECT_EQ(c1.kernel, 5u);
  EXPECT_EQ(c1.pad, 2u);
  EXPECT_EQ(c1.stride, 1u);
  EXPECT_TRUE(c1.activate);
  EXPECT_EQ(s.layers[1].kind, LayerKind::MaxPool);
  EXPECT_EQ(s.layers[1].kernel, 2u);
  EXPECT_EQ(s.layers[1].stride, 2u) << "the stride defaults to the window";
  EXPECT_EQ(s.layers[4].kind, LayerKind::Flatten);
  std::vector<Shape> want = {{28, 28, 1, true}, {28, 28, 6, true}, {14, 14, 6, true}, {10, 10, 16, true},
                             {5, 5, 16, true},  {1, 1, 400, false}, {1, 1, 120, false}, {1, 1, 84, false},
                             {1, 1, 10, false}};
  EXPECT_EQ(layer_shapes(s), want);
}

TEST(ModelSpec, OptionsInAnyOrderStridesAndAveragePooling) {
  ModelSpec s = parse_model("32x30x3-c8s2p1k3t-a3s2-m2s1-f-10");
  const LayerSpec& c = s.layers[0];
  EXPECT_EQ(c.kernel, 3u);
  EXPECT_EQ(c.pad, 1u);
  EXPECT_EQ(c.stride, 2u);
  EXPECT_EQ(c.act, ops::Activation::Tanh);
  EXPECT_EQ(s.layers[1].kind, LayerKind::AvgPool);
  EXPECT_EQ(s.layers[1].stride, 2u);
  EXPECT_EQ(s.layers[2].stride, 1u);
  auto shapes = layer_shapes(s);
  EXPECT_EQ(shapes[1], (Shape{16, 15, 8, true}));  // (32 + 2 - 3) / 2 + 1, (30 + 2 - 3) / 2 + 1
  EXPECT_EQ(shapes[2], (Shape{7, 7, 8, true}));    // (16 - 3) / 2 + 1, (15 - 3) / 2 + 1
  EXPECT_EQ(shapes[3], (Shape{6, 6, 8, true}));
  EXPECT_EQ(describe(s), "32x30x3-c8k3p1s2t-a3s2-m2s1-f-10") << "canonical option order";
}

TEST(ModelSpec, DescribeRoundTrips) {
  for (const char* m : {"6-5t-3", "16-1", "784-256r-256r-10", "28x28x1-c6k5p2r-m2-c16k5r-m2-f-120r-84r-10",
                        "8x8x3-c4k3-a2-f-10", "9x7x2-c5k3p1s2g-m3s1-c3k1r-f-4t-2", "5x5x1-f-3",
                        "12x12x4-m3s2-c2k2-f"}) {
    ModelSpec s = parse_model(m);
    EXPECT_EQ(describe(s), m);
    EXPECT_EQ(parse_model(describe(s)), s) << m;
  }
  // Defaults written out come back in the short form.
  EXPECT_EQ(describe(parse_model("8x8x1-c4k3p0s1r-m2s2-f-2")), "8x8x1-c4k3r-m2-f-2");
}

// Every activation of gpu_abi/activation_list.h by its letter, after a linear
// and after a conv (whose options k, p and s no letter may take), and back.
TEST(ModelSpec, EveryActivationHasItsLetter) {
  for (ops::Activation act : ops::kActivations) {
    const std::string letter(1, ops::activation_letter(act));
    SCOPED_TRACE(letter);
    for (const std::string& m : {"4-3" + letter + "-2", "6x6x1-c2k3p1s2" + letter + "-f-2"}) {
      ModelSpec s = parse_model(m);
      EXPECT_TRUE(s.layers[0].activate);
      EXPECT_EQ(s.layers[0].act, act) << m;
      EXPECT_EQ(describe(s), m);
    }
  }
}

// BatchNorm: "bn[act]" after a conv (BatchNorm2d) or a linear layer
// (BatchNorm1d), keeping the shape; its graph has PyTorch's names.
TEST(ModelSpec, BatchNormFollowsAConvOrLinearLayer) {
  ModelSpec s = parse_model("28x28x1-c16k3p1-bnr-m2-f-32-bn-10");
  ASSERT_EQ(s.layers.size(), 7u);
  EXPECT_EQ(s.layers[1].kind, LayerKind::BatchNorm);
  EXPECT_TRUE(s.layers[1].activate);
  EXPECT_EQ(s.layers[1].act, ops::Activation::ReLU);
  EXPECT_EQ(s.layers[5].kind, LayerKind::BatchNorm);
  EXPECT_FALSE(s.layers[5].activate);
  const std::vector<Shape> shapes = layer_shapes(s);
  EXPECT_EQ(shapes[2], shapes[1]) << "a BatchNorm keeps its input's shape";
  EXPECT_EQ(shapes[6], (Shape{1, 1, 32, false}));
  for (const char* m : {"28x28x1-c16k3p1-bnr-m2-f-10", "8-4-bn-2", "8-4t-bng-2", "6x6x2-c3k3-bn-c2k1-bnw-f-2"}) {
    EXPECT_EQ(describe(parse_model(m)), m);
    EXPECT_EQ(parse_model(describe(parse_model(m))), parse_model(m)) << m;
  }
  graph::Graph g = build_graph(parse_model("6x6x2-c3k3-bnr-f-2"));
  for (const char* name : {"bn1.weight", "bn1.bias"})
    EXPECT_EQ(g.tensor(name).kind, graph::TensorKind::Param) << name;
  for (const char* name : {"bn1.running_mean", "bn1.running_var", "bn1.num_batches_tracked"})
    EXPECT_EQ(g.tensor(name).kind, graph::TensorKind::Buffer) << name;
  EXPECT_EQ(g.tensor("bn1.running_var").dims, std::vector<uint32_t>{3});
  EXPECT_EQ(g.tensor("bn1.running_var").init, graph::Init::One);
  EXPECT_EQ(g.tensor("bn1.num_batches_tracked").dims, std::vector<uint32_t>{1});
  EXPECT_TRUE(g.has_tensor("bn1.act"));
}

TEST(ModelSpec, BatchNormErrorsNameTheLayer) {
  std::string e = error_of("28x28x1-bn-c4k3-f-10");
  EXPECT_CONTAINS(e, "layer 1 \"bn\"");
  EXPECT_CONTAINS(e, "a BatchNorm follows a linear or conv layer");
  EXPECT_CONTAINS(error_of("28x28x1-c4k3-m2-bn-f-10"), "a BatchNorm follows a linear or conv layer");
  EXPECT_CONTAINS(error_of("8-4-bn-bn-2"), "a BatchNorm follows a linear or conv layer");
  EXPECT_CONTAINS(error_of("8-4-bq-2"), "a BatchNorm is \"bn\"");
  EXPECT_CONTAINS(error_of("8-4-bnq-2"), "unexpected 'q'");
  EXPECT_CONTAINS(error_of("8-4-bnrr-2"), "the activation letter must come last");
}

TEST(ModelSpec, DropoutTakesAProbabilityAndKeepsTheShape) {
  for (const std::string m : {"784-256r-d0.2-10", "28x28x1-c6k5r-d0.5-m2-f-d0.125-10", "8-d0-4"}) {
    EXPECT_EQ(describe(parse_model(m)), m);
    EXPECT_EQ(parse_model(describe(parse_model(m))), parse_model(m)) << m;
  }
  const ModelSpec s = parse_model("8-d0.2-4");
  EXPECT_EQ(s.layers[0].kind, LayerKind::Dropout);
  EXPECT_EQ(s.layers[0].p, 0.2);
  EXPECT_EQ(layer_shapes(s)[1], layer_shapes(s)[0]);
  const graph::Graph g = build_graph(s);
  ASSERT_FALSE(g.nodes().empty());
  EXPECT_EQ(g.nodes()[0].name, "dropout1");
  EXPECT_EQ(g.nodes()[0].op, "dropout");
  EXPECT_EQ(g.nodes()[0].attrs.p, 0.2);
  EXPECT_CONTAINS(error_of("8-d1-4"), "must be at least 0 and below 1");
  EXPECT_CONTAINS(error_of("8-d-4"), "expected a probability");
  EXPECT_CONTAINS(error_of("8-d0.2.3-4"), "expected a probability");
  EXPECT_CONTAINS(error_of("8-d0.2r-4"), "a dropout takes no activation");
}

TEST(ModelSpec, UnknownLayersAndBadNumbersNameTheLayer) {
  std::string e = error_of("28x28x1-c6k5-x2-f-10");
  EXPECT_CONTAINS(e, "28x28x1-c6k5-x2-f-10");
  EXPECT_CONTAINS(e, "layer 2 \"x2\"");
  EXPECT_CONTAINS(e, "unknown layer");
  EXPECT_CONTAINS(error_of("784-0-10"), "width must be at least 1");
  EXPECT_CONTAINS(error_of("784-256q-10"), "unexpected 'q'");
  EXPECT_CONTAINS(error_of("784-256q-10"), "activations are r (relu), g (gelu)");
  EXPECT_CONTAINS(error_of("784--10"), "empty");
  EXPECT_CONTAINS(error_of("784-10-"), "empty");
  EXPECT_CONTAINS(error_of("784"), "at least one layer");
  EXPECT_CONTAINS(error_of(""), "empty");
  EXPECT_CONTAINS(error_of("784r-10"), "input");
  EXPECT_CONTAINS(error_of("28x28-c6k5-f-10"), "HxWxC");
  EXPECT_CONTAINS(error_of("28x28x0-c6k5-f-10"), "input channel count must be at least 1");
  EXPECT_CONTAINS(error_of("99999999-10"), "too large");
  EXPECT_CONTAINS(error_of("28x28x1-c6-f-10"), "needs a kernel size");
  EXPECT_CONTAINS(error_of("28x28x1-c6k5k3-f-10"), "'k' given twice");
  EXPECT_CONTAINS(error_of("28x28x1-c6k5s0-f-10"), "stride must be at least 1");
  EXPECT_CONTAINS(error_of("28x28x1-c6k5rp2-f-10"), "activation letter must come last");
  EXPECT_CONTAINS(error_of("28x28x1-m-f-10"), "expected a number for the pooling window");
}

TEST(ModelSpec, ShapeErrorsSayWhatDoesNotFit) {
  std::string e = error_of("8x8x1-c4k9-f-10");
  EXPECT_CONTAINS(e, "layer 1 \"c4k9\": the");
  EXPECT_CONTAINS(e, "9x9 kernel is larger than its input, an image of 8x8x1");
  EXPECT_NO_THROW(parse_model("8x8x1-c4k9p1-f-10")) << "padding makes it fit";
  EXPECT_CONTAINS(error_of("28x28x1-c6k5-m2-c16k5-m2-c8k5-f-10"),
                  "5x5 kernel is larger than its input, an image of 4x4x16");
  EXPECT_CONTAINS(error_of("5x5x2-m6-f-10"), "6x6 window is larger than its input");
  // Linear after a conv without flatten, and the reverse mistakes.
  e = error_of("28x28x1-c6k5r-m2-120r-10");
  EXPECT_CONTAINS(e, "layer 3 \"120r\": a linear");
  EXPECT_CONTAINS(e, "flatten it first");
  EXPECT_CONTAINS(error_of("28x28x1-10"), "flatten it first");
  EXPECT_CONTAINS(error_of("784-c6k5-f-10"), "a conv layer needs an image (HxWxC), but gets a vector of 784");
  EXPECT_CONTAINS(error_of("28x28x1-f-c6k5-10"), "conv layer needs an image");
  EXPECT_CONTAINS(error_of("784-m2-10"), "pooling needs an image");
  EXPECT_CONTAINS(error_of("28x28x1-f-f-10"), "already a vector of 784");
  // Activations only after linear and conv layers.
  EXPECT_CONTAINS(error_of("28x28x1-c6k5-m2r-f-10"), "max pool takes no activation");
  EXPECT_CONTAINS(error_of("28x28x1-c6k5-fr-10"), "flatten takes no activation");
  // A model must have parameters and end in a vector.
  EXPECT_CONTAINS(error_of("28x28x1-m2-f"), "at least one linear or conv layer");
  EXPECT_CONTAINS(error_of("28x28x1-c6k5"), "ends in an image of 24x24x6");
}

TEST(ModelSpec, HandBuiltSpecsAreCheckedToo) {
  ModelSpec s;
  s.input = {4, 4, 1, true};
  s.layers.push_back({.kind = LayerKind::MaxPool, .kernel = 2, .stride = 2, .activate = true});
  s.layers.push_back({.kind = LayerKind::Flatten});
  s.layers.push_back({.kind = LayerKind::Linear, .out = 3});
  try {
    layer_shapes(s);
    ADD_FAILURE() << "an activated pool was accepted";
  } catch (const ConfigError& e) {
    EXPECT_CONTAINS(e.what(), "only linear, conv and BatchNorm layers take an activation");
  }
  s.layers[0].activate = false;
  EXPECT_EQ(layer_shapes(s).back(), (Shape{1, 1, 3, false}));
}

}  // namespace
}  // namespace vkamp::models
