// layer_norm: LayerNorm over the last dimension (the channels c of an image
// or the features of a vector), inputs x, gamma {c}, beta {c}; each example
// normalises h * w rows of c values.
#include <stdexcept>

#include "vkamp/graph/op.hpp"
#include "vkamp/ops/layer_norm.hpp"

namespace vkamp::graph {

OpDef layer_norm_op() {
  OpDef d;
  d.name = "layer_norm";
  d.min_inputs = d.max_inputs = 3;
  d.params_from = 1;
  d.backward_reads_inputs = true;  // xhat from x and the kept statistics
  d.infer = [](const OpShapes& s) {
    uint32_t c = s.in[0]->shape.c;
    for (size_t i : {1, 2})
      if (s.in[i]->dims.size() != 1 || s.in[i]->dims[0] != c)
        throw std::invalid_argument("'" + s.in[i]->name + "' must be {" + std::to_string(c) + "}");
    return s.in[0]->shape;
  };
  // (mean, rstd) in fp32 per normalised row: 8 bytes, which 4 elements of
  // the smallest (2-byte) format hold; the scratch is sized in elements.
  d.kept_per_row = [](const OpShapes& s) { return uint64_t(4) * s.in[0]->shape.positions(); };
  d.forward = [](OpRun& r) {
    uint32_t c = r.shapes.out.c;
    ops::layer_norm_forward(r.seq, r.fmt, r.in(0), r.in(1), r.in(2), r.out(), r.kept(), r.rows * r.shapes.in[0]->shape.positions(), c);
  };
  d.backward = [](OpRun& r) {
    uint32_t c = r.shapes.out.c, rows = r.rows * r.shapes.in[0]->shape.positions();
    GradTarget dgamma = r.grad(1), dbeta = r.grad(2);
    // Each flag on its own: gamma may be tied to another use while beta is not.
    ops::layer_norm_backward_params(r.seq, r.fmt, r.in(0), r.kept(), r.dout(), dgamma.view, dbeta.view, rows, c,
                                    dgamma.accumulate, dbeta.accumulate);
    if (r.wants_grad(0)) {
      GradTarget dx = r.grad(0);
      ops::layer_norm_backward_input(r.seq, r.fmt, r.in(0), r.in(1), r.kept(), r.dout(), dx.view, rows, c,
                                     dx.accumulate);
    }
  };
  return d;
}

}  // namespace vkamp::graph
