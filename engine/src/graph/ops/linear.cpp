// linear: y = f(x W^T (+ b)). Inputs x (a vector, or a sequence: every
// position is a row), weight {out, in}, optional bias {out}. f is the
// identity, or attrs.act when attrs.activate (the executor's fusion of a
// linear and its activation, fuse_epilogues.hpp): the bias and f then run in
// the GEMM's epilogue, and the backward first turns dY into dZ = dY f'(z),
// unless the next linear's backward did (attrs.dout_is_dz: its dX GEMM
// applied f'(z) as it stored, attrs.dx_is_dz).
#include <stdexcept>

#include "../fuse_epilogues.hpp"
#include "vkamp/context.hpp"
#include "vkamp/graph/op.hpp"
#include "vkamp/ops/activation.hpp"
#include "vkamp/ops/bias.hpp"
#include "vkamp/ops/gemm.hpp"

namespace vkamp::graph {
namespace {

bool has_bias(const OpShapes& s) { return s.in.size() == 3; }
bool runs_backward(const OpShapes& s) {
  for (bool g : s.grads)
    if (g) return true;
  return false;
}
// Whether the forward keeps z = x W^T + b for f'(z) (every activation but
// ReLU: ops::backward_needs_input); ReLU's backward reads y instead.
bool keeps_z(const OpShapes& s) {
  return s.node.attrs.activate && ops::backward_needs_input(s.node.attrs.act) && runs_backward(s);
}
uint64_t out_elements(const OpShapes& s) { return s.out.elements(); }

}  // namespace

OpDef linear_op() {
  OpDef d;
  d.name = "linear";
  d.computes_in_16_bits_at_o1 = true;  // a GEMM
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.params_from = 1;
  d.backward_reads_inputs = true;  // dW = dY^T X
  d.backward_reads_output = [](const OpShapes& s) { return s.node.attrs.activate && !keeps_z(s); };
  d.infer = [](const OpShapes& s) {
    const Shape& x = s.in[0]->shape;
    const auto& w = s.in[1]->dims;
    if (x.image) throw std::invalid_argument("linear needs a vector or sequence input; flatten the image first");
    if (w.size() != 2 || w[1] != x.c)
      throw std::invalid_argument("weight '" + s.in[1]->name + "' must be {out, " + std::to_string(x.c) + "}");
    if (has_bias(s) && (s.in[2]->dims.size() != 1 || s.in[2]->dims[0] != w[0]))
      throw std::invalid_argument("bias '" + s.in[2]->name + "' must be {" + std::to_string(w[0]) + "}");
    return Shape::sequence(x.positions(), w[0]);  // a vector when x is one
  };
  d.kept_per_row = [](const OpShapes& s) { return keeps_z(s) ? out_elements(s) : 0; };
  // dZ, when f is not the identity.
  d.workspace_per_row = [](const OpShapes& s) {
    return s.node.attrs.activate && !s.node.attrs.dout_is_dz ? out_elements(s) : 0;
  };
  d.forward = [](OpRun& r) {
    const Attributes& a = r.shapes.node.attrs;
    uint32_t in = r.shapes.in[0]->shape.c, out = r.shapes.out.c, rows = r.rows * r.shapes.out.positions();
    ops::GemmEpilogue epilogue;
    if (a.activate) epilogue.act = a.act;
    if (keeps_z(r.shapes)) epilogue.z = r.kept();
    // The bias rides in the epilogue unless fusion is off (then: today's bias_add).
    bool separate_bias = has_bias(r.shapes) && !a.activate && !epilogue_fusion_enabled(r.seq.context().paths());
    if (has_bias(r.shapes) && !separate_bias) epilogue.bias = r.in(2);
    ops::linear_forward(r.seq, r.fmt, r.in(0), r.in(1), r.out(), rows, in, out, epilogue, r.blocks(1));
    if (separate_bias) ops::bias_add_forward(r.seq, r.fmt, r.out(), r.in(2), rows, out);
  };
  d.backward = [](OpRun& r) {
    const Attributes& a = r.shapes.node.attrs;
    uint32_t in = r.shapes.in[0]->shape.c, out = r.shapes.out.c, rows = r.rows * r.shapes.out.positions();
    BufferView dz = r.dout();
    if (a.activate && !a.dout_is_dz) {
      dz = r.workspace();
      ops::activation_backward(r.seq, r.fmt, a.act, keeps_z(r.shapes) ? r.kept() : r.out(), r.dout(), dz,
                               rows * out);
    }
    // A frozen weight or bias takes no gradient (and its product is not run).
    if (r.wants_grad(1)) {
      GradTarget dw = r.grad(1);
      ops::linear_backward_weight(r.seq, r.fmt, dz, r.in(0), dw.view, rows, in, out, dw.accumulate);
    }
    if (has_bias(r.shapes) && r.wants_grad(2)) {
      GradTarget db = r.grad(2);
      ops::bias_add_backward(r.seq, r.fmt, dz, db.view, rows, out, db.accumulate);
    }
    if (r.wants_grad(0)) {
      GradTarget dx = r.grad(0);
      ops::GemmEpilogue epilogue;
      if (a.dx_is_dz) epilogue = {.act = r.producer(0).attrs.act, .z = r.producer_kept(0), .act_grad = true};
      ops::linear_backward_input(r.seq, r.fmt, dz, r.in(1), dx.view, rows, in, out, dx.accumulate, epilogue,
                                 r.blocks(1));
    }
  };
  return d;
}

}  // namespace vkamp::graph
