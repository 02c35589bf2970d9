// linear: y = x W^T (+ b). Inputs x (a vector, or a sequence: every
// position is a row), weight {out, in}, optional bias {out}.
#include <stdexcept>

#include "vkamp/graph/op.hpp"
#include "vkamp/ops/bias.hpp"
#include "vkamp/ops/gemm.hpp"

namespace vkamp::graph {

OpDef linear_op() {
  OpDef d;
  d.name = "linear";
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.params_from = 1;
  d.backward_reads_inputs = true;  // dW = dY^T X
  d.infer = [](const OpShapes& s) {
    const Shape& x = s.in[0]->shape;
    const auto& w = s.in[1]->dims;
    if (x.image) throw std::invalid_argument("linear needs a vector or sequence input; flatten the image first");
    if (w.size() != 2 || w[1] != x.c)
      throw std::invalid_argument("weight '" + s.in[1]->name + "' must be {out, " + std::to_string(x.c) + "}");
    if (s.in.size() == 3 && (s.in[2]->dims.size() != 1 || s.in[2]->dims[0] != w[0]))
      throw std::invalid_argument("bias '" + s.in[2]->name + "' must be {" + std::to_string(w[0]) + "}");
    return Shape::sequence(x.positions(), w[0]);  // a vector when x is one
  };
  d.forward = [](OpRun& r) {
    uint32_t in = r.shapes.in[0]->shape.c, out = r.shapes.out.c, rows = r.rows * r.shapes.out.positions();
    ops::linear_forward(r.seq, r.fmt, r.in(0), r.in(1), r.out(), rows, in, out);
    if (r.shapes.in.size() == 3) ops::bias_add_forward(r.seq, r.fmt, r.out(), r.in(2), rows, out);
  };
  d.backward = [](OpRun& r) {
    uint32_t in = r.shapes.in[0]->shape.c, out = r.shapes.out.c, rows = r.rows * r.shapes.out.positions();
    GradTarget dw = r.grad(1);
    ops::linear_backward_weight(r.seq, r.fmt, r.dout(), r.in(0), dw.view, rows, in, out, dw.accumulate);
    if (r.shapes.in.size() == 3) {
      GradTarget db = r.grad(2);
      ops::bias_add_backward(r.seq, r.fmt, r.dout(), db.view, rows, out, db.accumulate);
    }
    if (r.wants_grad(0)) {
      GradTarget dx = r.grad(0);
      ops::linear_backward_input(r.seq, r.fmt, r.dout(), r.in(1), dx.view, rows, in, out, dx.accumulate);
    }
  };
  return d;
}

}  // namespace vkamp::graph
