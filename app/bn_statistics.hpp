// BatchNorm's running statistics as the studio shows them: per layer, the
// spread of running_mean and running_var across its channels and its
// num_batches_tracked, from one host read of the model's BufferStore.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vkamp/graph/param_layout.hpp"

namespace vkamp::app {

struct Spread {
  float min = 0, mean = 0, max = 0;
};

struct BnLayerStats {
  std::string layer;  // "layer2.0.bn1": the buffers' names without ".running_mean"
  uint32_t channels = 0;
  Spread running_mean, running_var;
  uint64_t batches = 0;  // num_batches_tracked
};

// One entry per layer with a running_mean, in the buffers' order; `flat`
// is BufferStore::read() over `tensors` (BufferStore::tensors()). Empty for
// a model without BatchNorm.
std::vector<BnLayerStats> bn_layer_stats(const std::vector<graph::ParamTensor>& tensors,
                                         const std::vector<float>& flat);

}  // namespace vkamp::app
