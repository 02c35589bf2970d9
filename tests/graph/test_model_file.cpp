// The YAML front end builds the same graph as the builder, and every error
// is a ConfigError naming the file and the node.
#include <gtest/gtest.h>

#include "graph_models.hpp"
#include "vkamp/graph/model_file.hpp"
#include "vkamp/config/train_config.hpp"
#include "vkamp/models/gpt.hpp"
#include "vkamp/models/model_spec.hpp"

namespace vkamp::test {
namespace {

// residual_mlp(5, 7, 3) in YAML, nodes deliberately out of order.
const char* kResidualYaml = R"(
input: {name: x, shape: [5]}
params:
  - {name: fc1.weight, dims: [7, 5]}
  - {name: fc1.bias, dims: [7], init: zero}
  - {name: fc2.weight, dims: [5, 7]}
  - {name: fc2.bias, dims: [5], init: zero}
  - {name: head.weight, dims: [3, 5]}
nodes:
  - {name: head, op: linear, inputs: [residual, head.weight]}
  - {name: fc1, op: linear, inputs: [x, fc1.weight, fc1.bias]}
  - {name: act1, op: activation, inputs: [fc1], act: relu}
  - {name: fc2, op: linear, inputs: [act1, fc2.weight, fc2.bias]}
  - {name: act2, op: activation, inputs: [fc2], act: relu}
  - {name: residual, op: add, inputs: [act2, x]}
output: head
)";

void expect_same_graph(const graph::Graph& a, const graph::Graph& b) {
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  for (const graph::Tensor& t : a.tensors()) {
    ASSERT_TRUE(b.has_tensor(t.name)) << t.name;
    const graph::Tensor& u = b.tensor(t.name);
    EXPECT_EQ(t.kind, u.kind) << t.name;
    EXPECT_EQ(t.shape, u.shape) << t.name;
    EXPECT_EQ(t.dims, u.dims) << t.name;
    EXPECT_EQ(t.init, u.init) << t.name;
    EXPECT_DOUBLE_EQ(t.init_std, u.init_std) << t.name;
  }
  ASSERT_EQ(a.nodes().size(), b.nodes().size());
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    EXPECT_EQ(a.nodes()[i].name, b.nodes()[i].name);
    EXPECT_EQ(a.nodes()[i].op, b.nodes()[i].op);
    EXPECT_EQ(a.nodes()[i].inputs, b.nodes()[i].inputs);
    EXPECT_EQ(a.nodes()[i].attrs.act, b.nodes()[i].attrs.act);
  }
  EXPECT_EQ(a.output_tensor().name, b.output_tensor().name);
}

TEST(ModelFile, ResidualMlpMatchesTheBuilder) {
  expect_same_graph(graph::parse_model_yaml(kResidualYaml, "residual.yaml"), residual_mlp(5, 7, 3));
}

// The YAML with `from` replaced by `to` must fail naming the file and `node`.
void expect_error(const std::string& from, const std::string& to, const std::string& node, const std::string& what) {
  std::string text = kResidualYaml;
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  try {
    graph::parse_model_yaml(text, "bad.yaml");
    ADD_FAILURE() << "no error for " << to;
  } catch (const vkamp::ConfigError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("bad.yaml"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'" + node + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

// gpt_graph({vocab 5, block 4, 1 layer, 2 heads, 4 channels}) in YAML:
// token ids in, embedding, attention with heads, normal inits with a std.
const char* kGptYaml = R"(
input: {name: idx, shape: [4], tokens: true}
params:
  - {name: transformer.wte.weight, dims: [5, 4], init: normal, std: 0.02}
  - {name: transformer.wpe.weight, dims: [4, 4], init: normal, std: 0.02}
  - {name: transformer.h.0.attn.c_attn.weight, dims: [12, 4], init: normal, std: 0.02}
  - {name: transformer.h.0.attn.c_proj.weight, dims: [4, 4], init: normal, std: 0.014142135623730949}
  - {name: transformer.h.0.mlp.c_fc.weight, dims: [16, 4], init: normal, std: 0.02}
  - {name: transformer.h.0.mlp.c_proj.weight, dims: [4, 16], init: normal, std: 0.014142135623730949}
  - {name: transformer.h.0.ln_1.weight, dims: [4], init: one}
  - {name: transformer.h.0.ln_1.bias, dims: [4], init: zero}
  - {name: transformer.h.0.ln_2.weight, dims: [4], init: one}
  - {name: transformer.h.0.ln_2.bias, dims: [4], init: zero}
  - {name: transformer.h.0.attn.c_attn.bias, dims: [12], init: zero}
  - {name: transformer.h.0.attn.c_proj.bias, dims: [4], init: zero}
  - {name: transformer.h.0.mlp.c_fc.bias, dims: [16], init: zero}
  - {name: transformer.h.0.mlp.c_proj.bias, dims: [4], init: zero}
  - {name: transformer.ln_f.weight, dims: [4], init: one}
  - {name: transformer.ln_f.bias, dims: [4], init: zero}
nodes:
  - {name: transformer.embed, op: embedding, inputs: [idx, transformer.wte.weight, transformer.wpe.weight]}
  - {name: transformer.h.0.ln_1, op: layer_norm,
     inputs: [transformer.embed, transformer.h.0.ln_1.weight, transformer.h.0.ln_1.bias]}
  - {name: transformer.h.0.attn.c_attn, op: linear,
     inputs: [transformer.h.0.ln_1, transformer.h.0.attn.c_attn.weight, transformer.h.0.attn.c_attn.bias]}
  - {name: transformer.h.0.attn, op: attention, inputs: [transformer.h.0.attn.c_attn], heads: 2}
  - {name: transformer.h.0.attn.c_proj, op: linear,
     inputs: [transformer.h.0.attn, transformer.h.0.attn.c_proj.weight, transformer.h.0.attn.c_proj.bias]}
  - {name: transformer.h.0.attn.residual, op: add, inputs: [transformer.embed, transformer.h.0.attn.c_proj]}
  - {name: transformer.h.0.ln_2, op: layer_norm,
     inputs: [transformer.h.0.attn.residual, transformer.h.0.ln_2.weight, transformer.h.0.ln_2.bias]}
  - {name: transformer.h.0.mlp.c_fc, op: linear,
     inputs: [transformer.h.0.ln_2, transformer.h.0.mlp.c_fc.weight, transformer.h.0.mlp.c_fc.bias]}
  - {name: transformer.h.0.mlp.gelu, op: activation, inputs: [transformer.h.0.mlp.c_fc], act: gelu}
  - {name: transformer.h.0.mlp.c_proj, op: linear,
     inputs: [transformer.h.0.mlp.gelu, transformer.h.0.mlp.c_proj.weight, transformer.h.0.mlp.c_proj.bias]}
  - {name: transformer.h.0.mlp.residual, op: add, inputs: [transformer.h.0.attn.residual, transformer.h.0.mlp.c_proj]}
  - {name: transformer.ln_f, op: layer_norm,
     inputs: [transformer.h.0.mlp.residual, transformer.ln_f.weight, transformer.ln_f.bias]}
  - {name: lm_head, op: linear, inputs: [transformer.ln_f, transformer.wte.weight]}
output: lm_head
)";

TEST(ModelFile, GptMatchesTheGptBuilder) {
  graph::Graph yaml = graph::parse_model_yaml(kGptYaml, "gpt.yaml");
  expect_same_graph(yaml, models::gpt_graph({5, 4, 1, 2, 4}));
  EXPECT_TRUE(yaml.input_tensor().shape.ids);
  EXPECT_EQ(yaml.output_tensor().shape, graph::Shape::sequence(4, 5));
}

TEST(ModelFile, TokenIdsFeedOnlyAnEmbedding) {
  std::string text = kGptYaml;
  text.replace(text.find("inputs: [transformer.embed, transformer.h.0.ln_1.weight"),
               std::string("inputs: [transformer.embed").size(), "inputs: [idx");
  try {
    graph::parse_model_yaml(text, "gpt.yaml");
    FAIL() << "a LayerNorm took token ids";
  } catch (const vkamp::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("only an embedding reads"), std::string::npos) << e.what();
  }
}

// Every activation of gpu_abi/activation_list.h by its name.
TEST(ModelFile, EveryActivationByName) {
  for (ops::Activation act : ops::kActivations) {
    SCOPED_TRACE(ops::activation_name(act));
    std::string text = kResidualYaml;
    const std::string from = "act: relu}", to = std::string("act: ") + ops::activation_name(act) + "}";
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
    expect_same_graph(graph::parse_model_yaml(text, "residual.yaml"), residual_mlp(5, 7, 3, act));
  }
}

TEST(ModelFile, UnknownActivation) {
  expect_error("act: relu}", "act: swish}", "act1", "unknown activation 'swish' (relu, gelu");
}
TEST(ModelFile, UnknownOp) { expect_error("op: add", "op: mul", "residual", "unknown op 'mul'"); }
TEST(ModelFile, UnknownInput) { expect_error("inputs: [fc1]", "inputs: [fc9]", "act1", "unknown input 'fc9'"); }
TEST(ModelFile, Cycle) { expect_error("inputs: [x, fc1.weight", "inputs: [act2, fc1.weight", "head", "cycle"); }
TEST(ModelFile, ShapeMismatch) { expect_error("inputs: [act2, x]", "inputs: [act1, x]", "residual", "shapes differ"); }
TEST(ModelFile, DuplicateName) { expect_error("name: act2,", "name: act1,", "act1", "already used"); }
TEST(ModelFile, WrongWeightShape) { expect_error("dims: [5, 7]", "dims: [5, 6]", "fc2", "must be {out, 7}"); }

// A conv-BN-ReLU net: the long form (parameters and buffers declared,
// all six inputs) and the short form (x alone) build the model string's graph.
const char* kConvBnLongYaml = R"(
input: {name: x, shape: [6, 6, 2]}
params:
  - {name: conv1.weight, dims: [3, 3, 3, 2]}
  - {name: conv1.bias, dims: [3], init: zero}
  - {name: bn1.weight, dims: [3], init: one}
  - {name: bn1.bias, dims: [3], init: zero}
  - {name: fc1.weight, dims: [2, 48]}
  - {name: fc1.bias, dims: [2], init: zero}
buffers:
  - {name: bn1.running_mean, dims: [3]}
  - {name: bn1.running_var, dims: [3], init: one}
  - {name: bn1.num_batches_tracked, dims: [1], init: zero}
nodes:
  - {name: conv1, op: conv2d, inputs: [x, conv1.weight, conv1.bias]}
  - {name: bn1, op: batch_norm,
     inputs: [conv1, bn1.weight, bn1.bias, bn1.running_mean, bn1.running_var, bn1.num_batches_tracked]}
  - {name: bn1.act, op: activation, inputs: [bn1], act: relu}
  - {name: flatten1, op: flatten, inputs: [bn1.act]}
  - {name: fc1, op: linear, inputs: [flatten1, fc1.weight, fc1.bias]}
output: fc1
)";

const char* kConvBnShortYaml = R"(
input: {name: x, shape: [6, 6, 2]}
params:
  - {name: conv1.weight, dims: [3, 3, 3, 2]}
  - {name: conv1.bias, dims: [3], init: zero}
  - {name: fc1.weight, dims: [2, 48]}
  - {name: fc1.bias, dims: [2], init: zero}
nodes:
  - {name: conv1, op: conv2d, inputs: [x, conv1.weight, conv1.bias]}
  - {name: bn1, op: batch_norm, inputs: [conv1]}
  - {name: bn1.act, op: activation, inputs: [bn1], act: relu}
  - {name: flatten1, op: flatten, inputs: [bn1.act]}
  - {name: fc1, op: linear, inputs: [flatten1, fc1.weight, fc1.bias]}
output: fc1
)";

TEST(ModelFile, BatchNormLongAndShortFormsMatchTheModelString) {
  const graph::Graph spec = models::build_graph(models::parse_model("6x6x2-c3k3-bnr-f-2"));
  const graph::Graph long_form = graph::parse_model_yaml(kConvBnLongYaml, "bn.yaml");
  expect_same_graph(long_form, spec);
  expect_same_graph(graph::parse_model_yaml(kConvBnShortYaml, "bn.yaml"), spec);
  EXPECT_EQ(long_form.buffer_indices().size(), 3u);
}

void expect_bn_error(const std::string& from, const std::string& to, const std::string& node,
                     const std::string& what) {
  std::string text = kConvBnLongYaml;
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  try {
    graph::parse_model_yaml(text, "bn.yaml");
    ADD_FAILURE() << "no error for " << to;
  } catch (const vkamp::ConfigError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("bn.yaml"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'" + node + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

TEST(ModelFile, BatchNormErrorsNameTheNode) {
  // A running statistic given as a parameter, a parameter as a buffer.
  expect_bn_error("bn1.weight, bn1.bias, bn1.running_mean", "bn1.weight, bn1.bias, bn1.weight", "bn1",
                  "input 'bn1.weight' must be a buffer");
  expect_bn_error("inputs: [conv1, bn1.weight", "inputs: [conv1, bn1.running_var", "bn1",
                  "input 'bn1.running_var' must not be a buffer");
  expect_bn_error("{name: bn1.running_mean, dims: [3]}", "{name: bn1.running_mean, dims: [4]}", "bn1",
                  "'bn1.running_mean' must be {3}");
  expect_bn_error("{name: bn1.num_batches_tracked, dims: [1], init: zero}",
                  "{name: bn1.num_batches_tracked, dims: [2], init: zero}", "bn1", "must be {1}");
  expect_bn_error("{name: bn1.running_var, dims: [3], init: one}", "{name: bn1.running_var, dims: [3], init: xavier}",
                  "bn1.running_var", "a buffer starts at 0 or 1");
  // A buffer feeds only an op that takes buffers.
  expect_bn_error("inputs: [bn1], act: relu", "inputs: [bn1.running_mean], act: relu", "bn1.act",
                  "input 'bn1.running_mean' must not be a buffer");
}

TEST(ModelFile, UnreadableFileNamesIt) {
  try {
    graph::load_model_file("/nonexistent/model.yaml");
    ADD_FAILURE() << "no error";
  } catch (const vkamp::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.yaml"), std::string::npos);
  }
}

}  // namespace
}  // namespace vkamp::test
