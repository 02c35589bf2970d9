#include "vkamp/models/resnet.hpp"

#include "vkamp/config_error.hpp"

namespace vkamp::models {

namespace {

// conv (with bias) -> BatchNorm, named as torchvision names the pair.
std::string conv_bn(graph::Graph& g, const std::string& x, const std::string& conv, const std::string& bn,
                    uint32_t in, uint32_t out, uint32_t k, uint32_t stride) {
  g.param(conv + ".weight", {out, k, k, in});
  g.param(conv + ".bias", {out}, graph::Init::Zero);
  g.conv2d(conv, x, conv + ".weight", conv + ".bias", stride, k / 2);
  return g.batch_norm(bn, conv);
}

// torchvision's BasicBlock: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)).
std::string basic_block(graph::Graph& g, const std::string& x, const std::string& p, uint32_t in, uint32_t out,
                        uint32_t stride) {
  const std::string a = conv_bn(g, x, p + "conv1", p + "bn1", in, out, 3, stride);
  g.activation(p + "relu1", a, ops::Activation::ReLU);
  const std::string b = conv_bn(g, p + "relu1", p + "conv2", p + "bn2", out, out, 3, 1);
  const std::string shortcut =
      stride == 1 && in == out ? x : conv_bn(g, x, p + "downsample.0", p + "downsample.1", in, out, 1, stride);
  g.add(p + "add", b, shortcut);
  return g.activation(p + "relu2", p + "add", ops::Activation::ReLU);
}

}  // namespace

graph::Graph resnet_graph(const ResNetConfig& c) {
  if (c.widths.empty() || !c.blocks || !c.height || !c.width || !c.channels || !c.classes || !c.stem_stride)
    throw ConfigError("resnet: at least one stage and one block, and every size at least 1");
  for (uint32_t w : c.widths)
    if (!w) throw ConfigError("resnet: a stage of width 0");
  graph::Graph g;
  g.set_origin(describe(c));
  g.input("x", graph::Shape::picture(c.height, c.width, c.channels));
  conv_bn(g, "x", "conv1", "bn1", c.channels, c.widths[0], 3, c.stem_stride);
  std::string x = g.activation("relu", "bn1", ops::Activation::ReLU);
  uint32_t in = c.widths[0];
  for (size_t s = 0; s < c.widths.size(); ++s)
    for (uint32_t b = 0; b < c.blocks; ++b) {
      const uint32_t stride = s > 0 && b == 0 ? 2 : 1;
      x = basic_block(g, x, "layer" + std::to_string(s + 1) + "." + std::to_string(b) + ".", in, c.widths[s], stride);
      in = c.widths[s];
    }
  const graph::Shape last = g.tensor(x).shape;
  if (last.h != last.w)
    throw ConfigError("resnet: the last stage's " + std::to_string(last.h) + "x" + std::to_string(last.w) +
                      " image is not square (global average pooling takes one window)");
  g.avg_pool("avgpool", x, last.h);  // the whole image: global average pooling
  g.flatten("flatten", "avgpool");
  g.param("fc.weight", {c.classes, in});
  g.param("fc.bias", {c.classes}, graph::Init::Zero);
  g.linear("fc", "flatten", "fc.weight", "fc.bias");
  g.set_output("fc");
  return g;
}

std::string describe(const ResNetConfig& c) {
  std::string s = "resnet ";
  for (size_t i = 0; i < c.widths.size(); ++i) s += (i ? "-" : "") + std::to_string(c.widths[i]);
  s += " x" + std::to_string(c.blocks);
  if (c.stem_stride != 1) s += " (stem stride " + std::to_string(c.stem_stride) + ")";
  return s;
}

}  // namespace vkamp::models
