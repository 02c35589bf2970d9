// The ops a graph may use, by name ("linear", "conv2d", "max_pool", ...):
// one vkamp_add_op() line each in ops.cmake, which generates the list.
#pragma once
#include <string>
#include <vector>

#include "vkamp/graph/op.hpp"

namespace vkamp::graph {

// nullptr for an unknown op.
const OpDef* find_op(const std::string& name);
std::vector<std::string> op_names();

}  // namespace vkamp::graph
