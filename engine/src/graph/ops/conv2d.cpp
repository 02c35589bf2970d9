// conv2d: y = conv(x, W) + b as im2col + GEMM (ops/conv.hpp). Inputs x (an
// image), weight {out_c, k, k, in_c}, bias {out_c}; attributes stride, pad.
// The im2col matrix is kept from forward for dW; dX needs a dcol scratch.
#include <stdexcept>

#include "vkamp/error.hpp"
#include "vkamp/graph/op.hpp"
#include "vkamp/ops/conv.hpp"

namespace vkamp::graph {
namespace {

ops::Conv2d conv_of(const OpShapes& s, uint32_t rows) {
  const Shape& x = s.in[0]->shape;
  const auto& w = s.in[1]->dims;
  return {.batch = rows, .in_h = x.h, .in_w = x.w, .in_c = x.c, .out_c = w[0], .kernel = w[1],
          .stride = s.node.attrs.stride, .pad = s.node.attrs.pad};
}

uint64_t col_per_row(const OpShapes& s) { return conv_of(s, 1).col_elements(); }

}  // namespace

OpDef conv2d_op() {
  OpDef d;
  d.name = "conv2d";
  d.computes_in_16_bits_at_o1 = true;  // a GEMM
  d.min_inputs = d.max_inputs = 3;
  d.params_from = 1;
  d.infer = [](const OpShapes& s) {
    const Shape& x = s.in[0]->shape;
    const auto& w = s.in[1]->dims;
    if (!x.image) throw std::invalid_argument("conv2d needs an image input");
    if (w.size() != 4 || w[1] != w[2] || w[3] != x.c)
      throw std::invalid_argument("weight '" + s.in[1]->name + "' must be {out_c, k, k, " + std::to_string(x.c) + "}");
    if (s.in[2]->dims != std::vector<uint32_t>{w[0]})
      throw std::invalid_argument("bias '" + s.in[2]->name + "' must be {" + std::to_string(w[0]) + "}");
    if (s.node.attrs.stride == 0) throw std::invalid_argument("stride 0");
    if (w[1] > x.h + 2 * s.node.attrs.pad || w[1] > x.w + 2 * s.node.attrs.pad)
      throw std::invalid_argument("the kernel is larger than the padded input " + to_string(x));
    ops::Conv2d c = conv_of(s, 1);
    return Shape::picture(c.out_h(), c.out_w(), c.out_c);
  };
  d.kept_per_row = col_per_row;
  d.workspace_per_row = [](const OpShapes& s) { return s.grads.size() && s.grads[0] ? col_per_row(s) : 0; };
  d.forward = [](OpRun& r) {
    ops::conv2d_forward(r.seq, r.fmt, conv_of(r.shapes, r.rows), r.in(0), r.in(1), r.in(2), r.kept(), r.out());
  };
  d.backward = [](OpRun& r) {
    ops::Conv2d c = conv_of(r.shapes, r.rows);
    GradTarget dw = r.grad(1), db = r.grad(2);
    // One kernel call writes or adds both: a weight and a bias shared
    // unevenly across convs would need two.
    if (dw.accumulate != db.accumulate) throw Error("conv2d '" + r.shapes.node.name + "': weight and bias shared unevenly");
    if (!r.wants_grad(0)) {
      ops::conv2d_backward(r.seq, r.fmt, c, r.dout(), r.kept(), r.in(1), dw.view, db.view, dw.accumulate);
      return;
    }
    r.overwrite_grad(0, [&](BufferView dx) {
      BufferView dcol = r.workspace();
      ops::conv2d_backward(r.seq, r.fmt, c, r.dout(), r.kept(), r.in(1), dw.view, db.view, dw.accumulate, &dcol, &dx);
    });
  };
  return d;
}

}  // namespace vkamp::graph
