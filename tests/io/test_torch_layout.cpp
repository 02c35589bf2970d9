// vkamp's parameter layout and its PyTorch form, on the host: the layout
// itself, export/import round trips, the conv and flatten permutations
// against index arithmetic written out here, and import's errors.
#include "vkamp/io/torch_layout.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/rejected_with.hpp"

#include "vkamp/float_formats.hpp"
#include "vkamp/graph/param_layout.hpp"
#include "vkamp/models/model_spec.hpp"

namespace vkamp::io {
namespace {

using graph::kParamTensorAlign;
using graph::ParamTensor;
using models::ModelSpec;
using models::param_layout;
using models::parse_model;

const std::string kLabel = "w.safetensors";

// Masters with a distinct value in every parameter and zero padding.
std::vector<float> distinct_masters(const ModelSpec& spec) {
  uint32_t total = 0;
  std::vector<ParamTensor> layout = param_layout(spec, &total);
  std::vector<float> m(total, 0.0f);
  float v = 0.001f;
  for (const ParamTensor& t : layout)
    for (uint32_t i = 0; i < t.size; ++i, v += 0.001f) m[t.offset + i] = (i % 2 ? -v : v);
  return m;
}

const io::Tensor& tensor(const std::vector<io::Tensor>& ts, const std::string& name) {
  for (const io::Tensor& t : ts)
    if (t.name == name) return t;
  throw std::runtime_error("no tensor " + name);
}

ParamTensor param(const ModelSpec& spec, const std::string& name) {
  for (const ParamTensor& t : param_layout(spec))
    if (t.name == name) return t;
  throw std::runtime_error("no parameter " + name);
}

io::TensorFile file_of(std::vector<io::Tensor> tensors) {
  io::TensorFile f;
  f.tensors = std::move(tensors);
  return f;
}

// import_torch_tensors throws a FormatError naming kLabel and saying `phrase`.
::testing::AssertionResult import_rejected(const ModelSpec& spec, const io::TensorFile& f, const std::string& phrase) {
  return test::rejected_with<io::FormatError>([&] { import_torch_tensors(spec, f, kLabel); }, kLabel, phrase);
}

TEST(TorchLayout, ParamLayoutOfLenet5) {
  ModelSpec spec = parse_model("28x28x1-c6k5p2r-m2-c16k5r-m2-f-120r-84r-10");
  uint32_t total = 0;
  std::vector<ParamTensor> layout = param_layout(spec, &total);
  std::vector<std::string> names;
  uint64_t real = 0;
  for (const ParamTensor& t : layout) {
    names.push_back(t.name);
    real += t.size;
    EXPECT_EQ(t.offset % kParamTensorAlign, 0u) << t.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight",
                                             "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"}));
  EXPECT_EQ(real, 61706u);  // PyTorch's count for the same network
  EXPECT_EQ(layout[2].size, 16u * 5 * 5 * 6);
  EXPECT_EQ(layout[2].offset, 256u + 128u);  // 150 and 6, each padded to 128s
  EXPECT_EQ(layout[4].size, 120u * 400);
  EXPECT_EQ(total, 62336u);
  EXPECT_EQ(total, layout.back().offset + kParamTensorAlign) << "the last tensor padded to the alignment";
}

TEST(TorchLayout, ConvModelRoundTripsAndUsesPyTorchShapes) {
  ModelSpec spec = parse_model("6x6x2-c3k3p1r-m2-f-5");
  std::vector<float> m = distinct_masters(spec);
  std::vector<io::Tensor> ts = export_torch_tensors(spec, m, DType::F32);
  ASSERT_EQ(ts.size(), 4u);
  EXPECT_EQ(ts[0].name, "conv1.weight");
  EXPECT_EQ(ts[0].shape, (std::vector<uint64_t>{3, 2, 3, 3}));
  EXPECT_EQ(ts[1].shape, (std::vector<uint64_t>{3}));
  EXPECT_EQ(ts[2].name, "fc1.weight");
  EXPECT_EQ(ts[2].shape, (std::vector<uint64_t>{5, 27}));  // 3x3x3 after the pool
  EXPECT_EQ(ts[3].shape, (std::vector<uint64_t>{5}));
  for (const io::Tensor& t : ts) EXPECT_EQ(t.dtype, DType::F32);
  EXPECT_EQ(import_torch_tensors(spec, file_of(ts), kLabel), m);
}

TEST(TorchLayout, ConvWeightIsOutInKhKwInTheFile) {
  ModelSpec spec = parse_model("6x6x2-c3k3p1r-m2-f-5");
  std::vector<float> m = distinct_masters(spec);
  std::vector<float> file = io::TensorFile{{}, export_torch_tensors(spec, m, DType::F32)}.floats("conv1.weight", "");
  const uint32_t out = 3, in = 2, k = 3, base = param(spec, "conv1.weight").offset;
  for (uint32_t o = 0; o < out; ++o)
    for (uint32_t i = 0; i < in; ++i)
      for (uint32_t ky = 0; ky < k; ++ky)
        for (uint32_t kx = 0; kx < k; ++kx)
          ASSERT_EQ(file[((o * in + i) * k + ky) * k + kx], m[base + o * (k * k * in) + (ky * k + kx) * in + i])
              << o << " " << i << " " << ky << " " << kx;
}

TEST(TorchLayout, LinearAfterFlattenHasChwColumnsInTheFile) {
  ModelSpec spec = parse_model("6x6x2-c3k3p1r-m2-f-5");
  std::vector<float> m = distinct_masters(spec);
  std::vector<float> file = io::TensorFile{{}, export_torch_tensors(spec, m, DType::F32)}.floats("fc1.weight", "");
  const uint32_t H = 3, W = 3, C = 3, in = H * W * C, base = param(spec, "fc1.weight").offset;
  for (uint32_t o = 0; o < 5; ++o)
    for (uint32_t c = 0; c < C; ++c)
      for (uint32_t h = 0; h < H; ++h)
        for (uint32_t w = 0; w < W; ++w)
          ASSERT_EQ(file[o * in + c * H * W + h * W + w], m[base + o * in + (h * W + w) * C + c])
              << o << " " << c << " " << h << " " << w;
}

TEST(TorchLayout, FlattenOfTheInputImageIsReorderedToo) {
  ModelSpec spec = parse_model("2x2x3-f-4");  // PyTorch flattens the NCHW input as (c, h, w)
  std::vector<float> m = distinct_masters(spec);
  std::vector<io::Tensor> ts = export_torch_tensors(spec, m, DType::F32);
  std::vector<float> file = file_of(ts).floats("fc1.weight", "");
  // Row 0: the file's column c*H*W + h*W + w is vkamp's (h*W + w)*C + c.
  EXPECT_EQ(file[0 * 4 + 0 * 2 + 1], m[(0 * 2 + 1) * 3 + 0]);
  EXPECT_EQ(file[2 * 4 + 1 * 2 + 1], m[(1 * 2 + 1) * 3 + 2]);
  EXPECT_EQ(file[1 * 4 + 1 * 2 + 0], m[(1 * 2 + 0) * 3 + 1]);
  EXPECT_EQ(import_torch_tensors(spec, file_of(ts), kLabel), m);
}

TEST(TorchLayout, MlpKeepsItsOrderAndRoundTrips) {
  ModelSpec spec = parse_model("4-3r-2");
  std::vector<float> m = distinct_masters(spec);
  std::vector<io::Tensor> ts = export_torch_tensors(spec, m, DType::F32);
  std::vector<std::string> names;
  for (const io::Tensor& t : ts) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}));
  EXPECT_EQ(tensor(ts, "fc1.weight").shape, (std::vector<uint64_t>{3, 4}));
  std::vector<float> w = file_of(ts).floats("fc2.weight", "");
  const uint32_t base = param(spec, "fc2.weight").offset;
  for (uint32_t i = 0; i < 6; ++i) EXPECT_EQ(w[i], m[base + i]);
  EXPECT_EQ(import_torch_tensors(spec, file_of(ts), kLabel), m);
}

TEST(TorchLayout, Fp16AndBf16ExportsRoundToNearestEven) {
  ModelSpec spec = parse_model("6x6x2-c3k3p1r-m2-f-5");
  std::vector<float> m = distinct_masters(spec);
  m[param(spec, "fc1.bias").offset] = 1.0f + 1.0f / 2048;  // halfway between fp16 neighbours: to even, 1
  for (auto [dtype, fmt] : {std::pair{DType::F16, Format::F16}, std::pair{DType::BF16, Format::BF16}}) {
    std::vector<io::Tensor> ts = export_torch_tensors(spec, m, dtype);
    for (const io::Tensor& t : ts) EXPECT_EQ(t.dtype, dtype);
    EXPECT_EQ(tensor(ts, "fc1.bias").data.size(), 5u * 2);
    std::vector<float> back = import_torch_tensors(spec, file_of(ts), kLabel);
    for (size_t i = 0; i < m.size(); ++i) ASSERT_EQ(back[i], round_to(fmt, m[i])) << format_name(fmt) << " " << i;
    EXPECT_EQ(back[param(spec, "fc1.bias").offset], 1.0f);
  }
}

// BatchNorm: weight and bias beside the layer's parameters, the running
// statistics as F32 whatever the weights' dtype, the counter as PyTorch
// stores it (I64, a 0-dim tensor), and a round trip of the buffers.
std::vector<float> distinct_buffers(const ModelSpec& spec) {
  uint32_t total = 0;
  std::vector<ParamTensor> layout = graph::layout_buffers(models::build_graph(spec), &total);
  std::vector<float> b(total, 0.0f);
  float v = 1.0f;  // whole numbers, which the I64 counter keeps
  for (const ParamTensor& t : layout)
    for (uint32_t i = 0; i < t.size; ++i, v += 1.0f) b[t.offset + i] = v;
  return b;
}

TEST(TorchLayout, BatchNormUsesPyTorchsNamesShapesAndDtypes) {
  ModelSpec spec = parse_model("6x6x2-c3k3p1-bnr-m2-f-5-bn-4");
  std::vector<float> m = distinct_masters(spec), b = distinct_buffers(spec);
  std::vector<io::Tensor> ts = export_torch_tensors(spec, m, DType::F16, b);
  std::vector<std::string> names;
  for (const io::Tensor& t : ts) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"conv1.weight", "conv1.bias", "bn1.weight", "bn1.bias", "fc1.weight",
                                             "fc1.bias", "bn2.weight", "bn2.bias", "fc2.weight", "fc2.bias",
                                             "bn1.running_mean", "bn1.running_var", "bn1.num_batches_tracked",
                                             "bn2.running_mean", "bn2.running_var", "bn2.num_batches_tracked"}));
  EXPECT_EQ(tensor(ts, "bn1.weight").shape, (std::vector<uint64_t>{3}));
  EXPECT_EQ(tensor(ts, "bn1.weight").dtype, DType::F16) << "a parameter, stored as the weights are";
  EXPECT_EQ(tensor(ts, "bn2.bias").shape, (std::vector<uint64_t>{5}));
  EXPECT_EQ(tensor(ts, "bn1.running_mean").dtype, DType::F32);
  EXPECT_EQ(tensor(ts, "bn1.running_var").shape, (std::vector<uint64_t>{3}));
  EXPECT_EQ(tensor(ts, "bn2.running_var").shape, (std::vector<uint64_t>{5}));
  const io::Tensor& tracked = tensor(ts, "bn1.num_batches_tracked");
  EXPECT_EQ(tracked.dtype, DType::I64);
  EXPECT_TRUE(tracked.shape.empty()) << "PyTorch's counter is a 0-dim tensor";
  ASSERT_EQ(tracked.data.size(), 8u);
  const ParamTensor counter = graph::layout_buffers(models::build_graph(spec))[2];
  ASSERT_EQ(counter.name, "bn1.num_batches_tracked");
  int64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= int64_t(tracked.data[i]) << (8 * i);
  EXPECT_EQ(n, int64_t(b[counter.offset]));
  const uint32_t var_at = graph::layout_buffers(models::build_graph(spec))[1].offset;
  const std::vector<float> var(b.begin() + var_at, b.begin() + var_at + 3);
  EXPECT_EQ(io::TensorFile({}, ts).floats("bn1.running_var", ""), var);

  // Back in: the masters (the F16 export rounds them) and the buffers exactly.
  std::vector<float> back;
  std::vector<float> masters = import_torch_tensors(spec, file_of(export_torch_tensors(spec, m, DType::F32, b)), kLabel, &back);
  EXPECT_EQ(masters, m);
  EXPECT_EQ(back, b);
  // Through a safetensors file, as PyTorch's load_state_dict reads it.
  const std::string path = ::testing::TempDir() + "bn.safetensors";
  io::write_safetensors(path, file_of(ts));
  std::vector<float> from_file;
  import_torch_tensors(spec, io::read_safetensors(path), path, &from_file);
  EXPECT_EQ(from_file, b);
}

// A graph (a job's own builder, the resnet sample's) exports its convs in
// PyTorch's [out][in][ky][kx] as a model string does: the same tensors as
// the spec path for the graph of that spec, and back in. A flatten that
// reorders features (several positions and channels) is refused, naming it.
TEST(TorchLayout, GraphConvWeightsExportAsTheSpecsDo) {
  ModelSpec spec = parse_model("6x6x2-c3k3p1-bnr-a6-f-5");  // the flatten of a 1x1x3 image keeps its order
  const graph::Graph g = models::build_graph(spec);
  std::vector<float> m = distinct_masters(spec), b = distinct_buffers(spec);
  std::vector<io::Tensor> from_spec = export_torch_tensors(spec, m, DType::F32, b);
  std::vector<io::Tensor> from_graph = export_torch_tensors(g, m, DType::F32, b);
  ASSERT_EQ(from_graph.size(), from_spec.size());
  for (size_t i = 0; i < from_spec.size(); ++i) {
    EXPECT_EQ(from_graph[i].name, from_spec[i].name);
    EXPECT_EQ(from_graph[i].shape, from_spec[i].shape) << from_spec[i].name;
    EXPECT_EQ(from_graph[i].data, from_spec[i].data) << from_spec[i].name;
  }
  EXPECT_EQ(tensor(from_graph, "conv1.weight").shape, (std::vector<uint64_t>{3, 2, 3, 3}));
  std::vector<float> back;
  EXPECT_EQ(import_torch_tensors(g, file_of(from_graph), kLabel, &back), m);
  EXPECT_EQ(back, b);

  const graph::Graph reordering = models::build_graph(parse_model("6x6x2-c3k3p1r-m2-f-5"));
  uint32_t total = 0;
  graph::layout_params(reordering, &total);
  EXPECT_THROW(
      {
        try {
          export_torch_tensors(reordering, std::vector<float>(total, 0.0f), DType::F32);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("flatten of a 3x3x3 image has no PyTorch layout"), std::string::npos)
              << e.what();
          throw;
        }
      },
      std::invalid_argument);
}

TEST(TorchLayout, BatchNormImportNamesAMissingOrNegativeCounter) {
  ModelSpec spec = parse_model("4-3-bnr-2");
  std::vector<io::Tensor> ts = export_torch_tensors(spec, distinct_masters(spec), DType::F32, distinct_buffers(spec));
  std::vector<io::Tensor> missing = ts;
  missing.pop_back();
  EXPECT_TRUE(import_rejected(spec, file_of(missing), "missing tensor 'bn1.num_batches_tracked' []"));
  std::vector<io::Tensor> negative = ts;
  negative.back().data.assign(8, 0xFF);  // -1
  EXPECT_TRUE(import_rejected(spec, file_of(negative), "tensor 'bn1.num_batches_tracked' holds -1"));
  EXPECT_THROW(export_torch_tensors(spec, distinct_masters(spec), DType::F32), std::invalid_argument)
      << "a model with buffers exports them";
}

// ---- import's errors ------------------------------------------------------

TEST(TorchLayout, ImportRejectsAWrongName) {
  ModelSpec spec = parse_model("4-3r-2");
  std::vector<io::Tensor> ts = export_torch_tensors(spec, distinct_masters(spec), DType::F32);
  ts[0].name = "fc1.weights";
  EXPECT_TRUE(import_rejected(spec, file_of(ts), "missing tensor 'fc1.weight' [3, 4] (model 4-3r-2)"));
  EXPECT_TRUE(import_rejected(spec, file_of(ts), "unexpected tensor(s) 'fc1.weights'"));
}

TEST(TorchLayout, ImportRejectsAMissingTensor) {
  ModelSpec spec = parse_model("4-3r-2");
  std::vector<io::Tensor> ts = export_torch_tensors(spec, distinct_masters(spec), DType::F32);
  ts.pop_back();
  EXPECT_TRUE(import_rejected(spec, file_of(ts), "missing tensor 'fc2.bias' [2]"));
}

TEST(TorchLayout, ImportRejectsAnExtraTensor) {
  ModelSpec spec = parse_model("4-3r-2");
  std::vector<io::Tensor> ts = export_torch_tensors(spec, distinct_masters(spec), DType::F32);
  ts.push_back({"fc3.weight", DType::F32, {1}, {0, 0, 0, 0}});
  EXPECT_TRUE(import_rejected(spec, file_of(ts), "unexpected tensor(s) 'fc3.weight'"));
}

TEST(TorchLayout, ImportRejectsAWrongShape) {
  ModelSpec spec = parse_model("4-3r-2");
  std::vector<io::Tensor> ts = export_torch_tensors(spec, distinct_masters(spec), DType::F32);
  ts[0].shape = {4, 3};  // transposed: the same size, the wrong layout
  EXPECT_TRUE(import_rejected(spec, file_of(ts), "tensor 'fc1.weight' has shape [4, 3], expected [3, 4]"));
}

TEST(TorchLayout, ImportRejectsAWrongDtype) {
  ModelSpec spec = parse_model("4-3r-2");
  std::vector<io::Tensor> ts = export_torch_tensors(spec, distinct_masters(spec), DType::F32);
  ts[1] = {"fc1.bias", DType::I64, {3}, std::vector<uint8_t>(24, 0)};
  EXPECT_TRUE(import_rejected(spec, file_of(ts), "tensor 'fc1.bias' has dtype I64; expected F32, F16 or BF16"));
}

TEST(TorchLayout, ImportRejectsConvWeightsOfAnotherModel) {
  ModelSpec spec = parse_model("6x6x2-c3k3p1r-m2-f-5");
  ModelSpec other = parse_model("6x6x2-c4k3p1r-m2-f-5");
  std::vector<io::Tensor> ts = export_torch_tensors(other, distinct_masters(other), DType::F32);
  EXPECT_TRUE(
      import_rejected(spec, file_of(ts), "tensor 'conv1.weight' has shape [4, 2, 3, 3], expected [3, 2, 3, 3]"));
}

}  // namespace
}  // namespace vkamp::io
