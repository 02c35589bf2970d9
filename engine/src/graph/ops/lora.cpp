// lora: a linear layer with a LoRA adapter (Hu et al.; PEFT's Linear):
//   y = x W^T (+ b) + scale (a A^T) B^T,  scale = lora_alpha / r,
// where a is the adapter's input: x itself, or dropout(x) (PEFT's
// lora_dropout, a dropout node before this one). Inputs x and a (vectors or
// sequences of one shape; a may be x), weight {out, in}, lora_A {r, in},
// lora_B {out, r}, optional bias {out}. W and b are usually frozen (then
// their gradients, and the dW product, are not run; a frozen W may be held
// in ggml blocks, a quantized base); A and B train. The
// forward keeps u = a A^T (r per row) for the backward:
//   dB = scale dY^T u,  du = scale dY B,  dA = du^T a,  dX = dY W,  da = du A
// (one gradient, dY W + du A, when a is x).
#include <cmath>
#include <stdexcept>

#include "vkamp/graph/op.hpp"
#include "vkamp/ops/bias.hpp"
#include "vkamp/ops/gemm.hpp"

namespace vkamp::graph {

namespace {

// Inputs: x, the adapter's input, weight, lora_A, lora_B, [bias].
constexpr size_t kX = 0, kAdapterInput = 1, kWeight = 2, kA = 3, kB = 4, kBias = 5;
bool has_bias(const OpShapes& s) { return s.in.size() == 6; }
uint32_t rank(const OpShapes& s) { return s.in[kA]->dims[0]; }

}  // namespace

OpDef lora_op() {
  OpDef d;
  d.name = "lora";
  d.computes_in_16_bits_at_o1 = true;  // GEMMs
  d.min_inputs = 5;
  d.max_inputs = 6;
  d.params_from = 2;
  d.backward_reads_inputs = true;  // dA = du^T a
  d.infer = [](const OpShapes& s) {
    const Shape& x = s.in[kX]->shape;
    const auto &w = s.in[kWeight]->dims, &a = s.in[kA]->dims, &b = s.in[kB]->dims;
    if (x.image) throw std::invalid_argument("lora needs a vector or sequence input; flatten the image first");
    if (!(s.in[kAdapterInput]->shape == x))
      throw std::invalid_argument("the adapter's input '" + s.in[kAdapterInput]->name + "' must have x's shape " +
                                  to_string(x));
    if (w.size() != 2 || w[1] != x.c)
      throw std::invalid_argument("weight '" + s.in[kWeight]->name + "' must be {out, " + std::to_string(x.c) + "}");
    if (a.size() != 2 || a[1] != x.c || a[0] == 0)
      throw std::invalid_argument("lora_A '" + s.in[kA]->name + "' must be {r, " + std::to_string(x.c) + "}");
    if (b.size() != 2 || b[0] != w[0] || b[1] != a[0])
      throw std::invalid_argument("lora_B '" + s.in[kB]->name + "' must be {" + std::to_string(w[0]) + ", " +
                                  std::to_string(a[0]) + "}");
    if (has_bias(s) && (s.in[kBias]->dims.size() != 1 || s.in[kBias]->dims[0] != w[0]))
      throw std::invalid_argument("bias '" + s.in[kBias]->name + "' must be {" + std::to_string(w[0]) + "}");
    if (!std::isfinite(s.node.attrs.scale)) throw std::invalid_argument("the adapter's scale must be finite");
    return Shape::sequence(x.positions(), w[0]);
  };
  d.kept_per_row = [](const OpShapes& s) { return uint64_t(s.out.positions()) * rank(s); };      // u
  d.workspace_per_row = [](const OpShapes& s) { return uint64_t(s.out.positions()) * rank(s); };  // du
  d.forward = [](OpRun& r) {
    const uint32_t in = r.shapes.in[kX]->shape.c, out = r.shapes.out.c, rk = rank(r.shapes),
                   rows = r.rows * r.shapes.out.positions();
    ops::GemmEpilogue base;
    if (has_bias(r.shapes)) base.bias = r.in(kBias);
    ops::linear_forward(r.seq, r.fmt, r.in(kX), r.in(kWeight), r.out(), rows, in, out, base, r.blocks(kWeight));
    ops::linear_forward(r.seq, r.fmt, r.in(kAdapterInput), r.in(kA), r.kept(), rows, in, rk);
    // y += scale u B^T: the adapter added in fp32 to the stored base product.
    const ops::Gemm up{.m = rows, .n = out, .k = rk, .trans_b = true, .alpha = float(r.shapes.node.attrs.scale),
                       .accumulate = true};
    ops::gemm(r.seq, r.fmt, up, r.kept(), r.in(kB), r.out());
  };
  d.backward = [](OpRun& r) {
    const uint32_t in = r.shapes.in[kX]->shape.c, out = r.shapes.out.c, rk = rank(r.shapes),
                   rows = r.rows * r.shapes.out.positions();
    const float scale = float(r.shapes.node.attrs.scale);
    const BufferView dy = r.dout(), u = r.kept(), du = r.workspace();
    if (r.wants_grad(kWeight)) {
      const GradTarget dw = r.grad(kWeight);
      ops::linear_backward_weight(r.seq, r.fmt, dy, r.in(kX), dw.view, rows, in, out, dw.accumulate);
    }
    if (has_bias(r.shapes) && r.wants_grad(kBias)) {
      const GradTarget db = r.grad(kBias);
      ops::bias_add_backward(r.seq, r.fmt, dy, db.view, rows, out, db.accumulate);
    }
    if (r.wants_grad(kB)) {  // dB = scale dY^T u
      const GradTarget db = r.grad(kB);
      const ops::Gemm g{.m = out, .n = rk, .k = rows, .trans_a = true, .alpha = scale, .accumulate = db.accumulate};
      ops::gemm(r.seq, r.fmt, g, dy, u, db.view);
    }
    // du = scale dY B, then dA = du^T a.
    const ops::Gemm g{.m = rows, .n = rk, .k = out, .alpha = scale};
    ops::gemm(r.seq, r.fmt, g, dy, r.in(kB), du);
    if (r.wants_grad(kA)) {
      const GradTarget da = r.grad(kA);
      ops::linear_backward_weight(r.seq, r.fmt, du, r.in(kAdapterInput), da.view, rows, in, rk, da.accumulate);
    }
    // dX = dY W and da = du A; when a is x, the second adds to the first
    // (the executor counts the second call as another contribution).
    if (r.wants_grad(kX)) {
      const GradTarget dx = r.grad(kX);
      ops::linear_backward_input(r.seq, r.fmt, dy, r.in(kWeight), dx.view, rows, in, out, dx.accumulate, {},
                                 r.blocks(kWeight));
    }
    if (r.wants_grad(kAdapterInput)) {
      const GradTarget da = r.grad(kAdapterInput);
      ops::linear_backward_input(r.seq, r.fmt, du, r.in(kA), da.view, rows, in, rk, da.accumulate);
    }
  };
  return d;
}

}  // namespace vkamp::graph
