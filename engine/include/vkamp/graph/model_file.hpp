// The YAML front end of the graph: a model file lists the input, the
// parameters and the nodes by name, in any order (they are sorted
// topologically), and names the output:
//
//   input: {name: x, shape: [16]}          # or [28, 28, 1] for an image
//   params:
//     - {name: fc1.weight, dims: [32, 16]}  # init: kaiming (default), xavier, zero, one
//     - {name: fc1.bias, dims: [32], init: zero}
//   buffers:                                # state that is not trained; init zero (default) or one
//     - {name: bn1.running_mean, dims: [32]}
//   nodes:
//     - {name: fc1, op: linear, inputs: [x, fc1.weight, fc1.bias]}
//     - {name: relu1, op: activation, inputs: [fc1], act: relu}
//     - {name: res, op: add, inputs: [relu1, x]}
//   output: res
//
// A batch_norm node lists x, weight, bias, running_mean, running_var and
// num_batches_tracked, or x alone: then it declares them itself with
// PyTorch's names (<node>.weight, ...; Graph::batch_norm).
//
// Attributes: act (an activation's name: relu, gelu, ...; the list in
// gpu_abi/activation_list.h), window, stride, pad. Errors (an unknown op or
// input, a cycle, a shape mismatch, a duplicate name, bad YAML) are
// ConfigError naming the file and the node.
#pragma once
#include <string>

#include "vkamp/graph/graph.hpp"

namespace vkamp::graph {

Graph load_model_file(const std::string& path);
// The same from YAML text; `origin` names it in messages.
Graph parse_model_yaml(const std::string& text, const std::string& origin);

}  // namespace vkamp::graph
