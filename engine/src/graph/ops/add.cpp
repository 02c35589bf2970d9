// add: y = a + b, two tensors of one shape (a residual connection).
#include <stdexcept>

#include "vkamp/graph/op.hpp"
#include "vkamp/ops/add.hpp"

namespace vkamp::graph {

OpDef add_op() {
  OpDef d;
  d.name = "add";
  d.min_inputs = d.max_inputs = 2;
  d.infer = [](const OpShapes& s) {
    if (s.in[0]->shape != s.in[1]->shape)
      throw std::invalid_argument("shapes differ: '" + s.in[0]->name + "' is " + to_string(s.in[0]->shape) +
                                  ", '" + s.in[1]->name + "' is " + to_string(s.in[1]->shape));
    return s.in[0]->shape;
  };
  d.forward = [](OpRun& r) {
    ops::add_forward(r.seq, r.fmt, r.in(0), r.in(1), r.out(), r.rows * r.shapes.out.elements());
  };
  d.backward = [](OpRun& r) {
    for (size_t i = 0; i < 2; ++i) {
      if (!r.wants_grad(i)) continue;
      GradTarget dx = r.grad(i);
      if (dx.holds_dout) continue;  // dY's own buffer: dX = dY already
      ops::add_backward(r.seq, r.fmt, r.dout(), dx.view, r.rows * r.shapes.out.elements(), dx.accumulate);
    }
  };
  return d;
}

}  // namespace vkamp::graph
