// Per-layer loss scaling (Zhao et al. 2019, "Adaptive Loss
// Scaling for Mixed Precision Training"): the scale groups of a graph. Each
// node that owns parameters (linear, conv2d, layer_norm, embedding...)
// starts a group; a node without parameters joins the group of the nodes
// that produce its inputs. In the backward pass the gradients of group g
// carry the group's own scale S_g, and the activation gradient that leaves
// group g through its first node's input 0 towards the group that produced
// that input (its "upstream" group) is multiplied by S_upstream / S_g.
//
// That is well defined only where each activation gradient is the gradient
// of one group: a chain of layers (an MLP, a CNN). A gradient summed from
// two groups (a residual add, a tensor read by two layers, a parameter used
// twice as in a GPT's tied embedding) would mix two scales; scale_groups()
// refuses such a graph with a ConfigError (exit status 2) naming the node.
#pragma once
#include <string>
#include <vector>

#include "vkamp/graph/graph.hpp"

namespace vkamp::graph {

struct ScaleGroup {
  std::string node;                 // the node that starts it (its name in `steps`)
  size_t step = 0;                  // its index in `steps`
  int upstream = -1;                // the group its input 0's gradient flows into; -1: none
  std::vector<std::string> params;  // its parameters
};

struct ScaleGroups {
  std::vector<ScaleGroup> groups;  // in forward order
  int output_group = -1;           // the group the loss gradient enters (-1: no parameters at all)
};

// `steps`: the nodes the executor runs (graph.nodes() after fuse_epilogues),
// in topological order. Throws vkamp::ConfigError when the graph is not a chain.
ScaleGroups scale_groups(const Graph& g, const std::vector<Node>& steps);

}  // namespace vkamp::graph
