// What the executor knows about one node: its op, shapes, whether it runs
// backward, and its scratch buffers (indices into the workspace lifetimes).
#pragma once
#include "vkamp/graph/executor.hpp"

namespace vkamp::graph {

struct Executor::NodeState {
  const OpDef* def = nullptr;
  OpShapes shapes;
  bool runs_backward = false;
  int kept = -1, work = -1, sum = -1;  // -1 = none
  // Recomputed: the kept scratch its second forward writes and its
  // backward reads (-1: kept serves both).
  int kept_again = -1;
  explicit NodeState(const Node& n) : shapes{n, {}, {}, {}} {}
};

}  // namespace vkamp::graph
