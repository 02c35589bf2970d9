// A small ResNet for small images (Fashion-MNIST's 28x28x1) as a vkamp
// graph: a conv-BN-ReLU stem, then stages of basic residual blocks (two
// 3x3 conv-BN pairs, ReLU after the first and after the add), each stage
// after the first halving the resolution with stride 2 and widening, its
// first block's shortcut a 1x1 stride-2 conv with BN (ResNet's option B),
// then a global average pool (avg_pool over the whole image) and a linear
// classifier. He et al. 2016's CIFAR design at one block per stage.
//
// Parameter names are torchvision's ResNet's ("conv1.weight", "bn1.*",
// "layer2.0.conv1.weight", "layer2.0.downsample.0.weight",
// "layer2.0.downsample.1.running_mean", "fc.weight"), so exported weights
// load into bench/torch_resnet.py's model with load_state_dict. Every conv
// has a bias (vkamp's conv2d takes one; the BN after it cancels it), and the
// PyTorch model declares them too.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vkamp/graph/graph.hpp"

namespace vkamp::models {

struct ResNetConfig {
  uint32_t height = 28, width = 28, channels = 1, classes = 10;
  std::vector<uint32_t> widths = {16, 32, 64};  // one stage each
  uint32_t blocks = 1;                          // residual blocks per stage
  uint32_t stem_stride = 1;                     // 2 halves the resolution before the first stage
};

// Throws ConfigError for a config that cannot be built (no stage, a zero size).
graph::Graph resnet_graph(const ResNetConfig& c);

// "resnet 16-32-64 x1 (stem stride 2)": the graph's origin, which the
// samples print and --save writes as vkamp.model.
std::string describe(const ResNetConfig& c);

}  // namespace vkamp::models
