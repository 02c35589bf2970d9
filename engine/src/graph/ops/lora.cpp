// lora: a linear layer with a LoRA adapter (Hu et al.; PEFT's Linear):
//   y = x W^T (+ b) + scale (x A^T) B^T,  scale = lora_alpha / r.
// Inputs x (a vector or a sequence), weight {out, in}, lora_A {r, in},
// lora_B {out, r}, optional bias {out}. W and b are usually frozen (then
// their gradients, and the dW product, are not run); A and B train. The
// forward keeps u = x A^T (r per row) for the backward:
//   dB = scale dY^T u,  du = scale dY B,  dA = du^T x,  dX = dY W + du A.
#include <cmath>
#include <stdexcept>

#include "vkamp/graph/op.hpp"
#include "vkamp/ops/bias.hpp"
#include "vkamp/ops/gemm.hpp"

namespace vkamp::graph {

namespace {

bool has_bias(const OpShapes& s) { return s.in.size() == 5; }
uint32_t rank(const OpShapes& s) { return s.in[2]->dims[0]; }

}  // namespace

OpDef lora_op() {
  OpDef d;
  d.name = "lora";
  d.computes_in_16_bits_at_o1 = true;  // GEMMs
  d.min_inputs = 4;
  d.max_inputs = 5;
  d.params_from = 1;
  d.backward_reads_inputs = true;  // dA = du^T x
  d.infer = [](const OpShapes& s) {
    const Shape& x = s.in[0]->shape;
    const auto &w = s.in[1]->dims, &a = s.in[2]->dims, &b = s.in[3]->dims;
    if (x.image) throw std::invalid_argument("lora needs a vector or sequence input; flatten the image first");
    if (w.size() != 2 || w[1] != x.c)
      throw std::invalid_argument("weight '" + s.in[1]->name + "' must be {out, " + std::to_string(x.c) + "}");
    if (a.size() != 2 || a[1] != x.c || a[0] == 0)
      throw std::invalid_argument("lora_A '" + s.in[2]->name + "' must be {r, " + std::to_string(x.c) + "}");
    if (b.size() != 2 || b[0] != w[0] || b[1] != a[0])
      throw std::invalid_argument("lora_B '" + s.in[3]->name + "' must be {" + std::to_string(w[0]) + ", " +
                                  std::to_string(a[0]) + "}");
    if (has_bias(s) && (s.in[4]->dims.size() != 1 || s.in[4]->dims[0] != w[0]))
      throw std::invalid_argument("bias '" + s.in[4]->name + "' must be {" + std::to_string(w[0]) + "}");
    if (!std::isfinite(s.node.attrs.scale)) throw std::invalid_argument("the adapter's scale must be finite");
    return Shape::sequence(x.positions(), w[0]);
  };
  d.kept_per_row = [](const OpShapes& s) { return uint64_t(s.out.positions()) * rank(s); };      // u
  d.workspace_per_row = [](const OpShapes& s) { return uint64_t(s.out.positions()) * rank(s); };  // du
  d.forward = [](OpRun& r) {
    const uint32_t in = r.shapes.in[0]->shape.c, out = r.shapes.out.c, rk = rank(r.shapes),
                   rows = r.rows * r.shapes.out.positions();
    ops::GemmEpilogue base;
    if (has_bias(r.shapes)) base.bias = r.in(4);
    ops::linear_forward(r.seq, r.fmt, r.in(0), r.in(1), r.out(), rows, in, out, base);
    ops::linear_forward(r.seq, r.fmt, r.in(0), r.in(2), r.kept(), rows, in, rk);
    // y += scale u B^T: the adapter added in fp32 to the stored base product.
    const ops::Gemm up{.m = rows, .n = out, .k = rk, .trans_b = true, .alpha = float(r.shapes.node.attrs.scale),
                       .accumulate = true};
    ops::gemm(r.seq, r.fmt, up, r.kept(), r.in(3), r.out());
  };
  d.backward = [](OpRun& r) {
    const uint32_t in = r.shapes.in[0]->shape.c, out = r.shapes.out.c, rk = rank(r.shapes),
                   rows = r.rows * r.shapes.out.positions();
    const float scale = float(r.shapes.node.attrs.scale);
    const BufferView dy = r.dout(), u = r.kept(), du = r.workspace();
    if (r.wants_grad(1)) {
      const GradTarget dw = r.grad(1);
      ops::linear_backward_weight(r.seq, r.fmt, dy, r.in(0), dw.view, rows, in, out, dw.accumulate);
    }
    if (has_bias(r.shapes) && r.wants_grad(4)) {
      const GradTarget db = r.grad(4);
      ops::bias_add_backward(r.seq, r.fmt, dy, db.view, rows, out, db.accumulate);
    }
    if (r.wants_grad(3)) {  // dB = scale dY^T u
      const GradTarget db = r.grad(3);
      const ops::Gemm g{.m = out, .n = rk, .k = rows, .trans_a = true, .alpha = scale, .accumulate = db.accumulate};
      ops::gemm(r.seq, r.fmt, g, dy, u, db.view);
    }
    // du = scale dY B, then dA = du^T x.
    const ops::Gemm g{.m = rows, .n = rk, .k = out, .alpha = scale};
    ops::gemm(r.seq, r.fmt, g, dy, r.in(3), du);
    if (r.wants_grad(2)) {
      const GradTarget da = r.grad(2);
      ops::linear_backward_weight(r.seq, r.fmt, du, r.in(0), da.view, rows, in, rk, da.accumulate);
    }
    if (r.wants_grad(0)) {  // dX = dY W + du A
      const GradTarget dx = r.grad(0);
      ops::linear_backward_input(r.seq, r.fmt, dy, r.in(1), dx.view, rows, in, out, dx.accumulate);
      ops::linear_backward_input(r.seq, r.fmt, du, r.in(2), dx.view, rows, in, rk, true);
    }
  };
  return d;
}

}  // namespace vkamp::graph
