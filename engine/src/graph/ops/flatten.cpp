// flatten: an image read as a vector. In NHWC this moves no data (feature
// (y * W + x) * C + c), so the output is a view of the input's bytes and its
// gradient a view of the input's gradient: nothing is recorded.
#include "vkamp/graph/op.hpp"

namespace vkamp::graph {

OpDef flatten_op() {
  OpDef d;
  d.name = "flatten";
  d.view = true;
  d.infer = [](const OpShapes& s) { return Shape::vector(s.in[0]->shape.elements()); };
  d.forward = [](OpRun&) {};
  d.backward = [](OpRun&) {};
  return d;
}

}  // namespace vkamp::graph
