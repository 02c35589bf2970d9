// activation: y = f(x) elementwise (attribute act: gpu_abi/activation_list.h).
#include "vkamp/graph/op.hpp"
#include "vkamp/ops/activation.hpp"

namespace vkamp::graph {

OpDef activation_op() {
  OpDef d;
  d.name = "activation";
  d.backward_reads_inputs = true;  // f'(x)
  d.infer = [](const OpShapes& s) { return s.in[0]->shape; };
  d.forward = [](OpRun& r) {
    ops::activation_forward(r.seq, r.fmt, r.shapes.node.attrs.act, r.in(0), r.out(), r.rows * r.shapes.out.elements());
  };
  d.backward = [](OpRun& r) {
    r.overwrite_grad(0, [&](BufferView dx) {
      ops::activation_backward(r.seq, r.fmt, r.shapes.node.attrs.act, r.in(0), r.dout(), dx,
                               r.rows * r.shapes.out.elements());
    });
  };
  return d;
}

}  // namespace vkamp::graph
