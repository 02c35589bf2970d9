// glu: a gated linear unit, inputs gate and up of one shape, output
// attrs.act(gate) * up (ops/glu.hpp): Llama's SwiGLU with act = silu, so
// its MLP is down(glu(gate(x), up(x))).
#include <stdexcept>

#include "vkamp/graph/op.hpp"
#include "vkamp/ops/glu.hpp"

namespace vkamp::graph {

OpDef glu_op() {
  OpDef d;
  d.name = "glu";
  d.min_inputs = d.max_inputs = 2;
  d.backward_reads_inputs = true;
  d.infer = [](const OpShapes& s) {
    if (!(s.in[0]->shape == s.in[1]->shape))
      throw std::invalid_argument("gate '" + s.in[0]->name + "' is " + to_string(s.in[0]->shape) + " but up '" +
                                  s.in[1]->name + "' is " + to_string(s.in[1]->shape));
    return s.in[0]->shape;
  };
  d.forward = [](OpRun& r) {
    ops::glu_forward(r.seq, r.fmt, r.shapes.node.attrs.act, r.in(0), r.in(1), r.out(),
                     r.rows * r.shapes.out.elements());
  };
  d.backward = [](OpRun& r) {
    BufferView dgate = r.dout(), dup = r.dout();
    const ops::GradWrite gate_write = grad_write(r, 0, dgate), up_write = grad_write(r, 1, dup);
    ops::glu_backward(r.seq, r.fmt, r.shapes.node.attrs.act, r.in(0), r.in(1), r.dout(), dgate, gate_write, dup,
                      up_write, r.rows * r.shapes.out.elements());
  };
  return d;
}

}  // namespace vkamp::graph
