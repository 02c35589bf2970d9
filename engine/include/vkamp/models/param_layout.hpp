// Where each parameter tensor of a model lives in the flat parameter buffers
// (masters, working copy, gradients, moments): one definition shared by
// Model and the PyTorch-layout export and import (torch_layout.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vkamp/graph/param_layout.hpp"
#include "vkamp/models/model_spec.hpp"

namespace vkamp::models {

using graph::kParamTensorAlign;
using graph::ParamTensor;

// Named per kind in layer order ("conv1.weight", "conv1.bias", ...,
// "fc1.weight", ...), a weight then its bias for every Linear and Conv2d
// layer. A Linear weight is out x in; a Conv2d weight is out_c x (ky, kx,
// in_c). *padded_total (when given) is the padded element count. Throws
// vkamp::Error when a tensor or the total does not fit in 32 bits, and
// ConfigError for a spec that cannot be built.
std::vector<ParamTensor> param_layout(const ModelSpec& spec, uint32_t* padded_total = nullptr);

}  // namespace vkamp::models
