// rms_norm: RMSNorm over the last dimension (Llama's input_layernorm,
// post_attention_layernorm and model.norm), inputs x and weight {c}:
// y = x / sqrt(mean(x^2) + eps) * weight, statistics in fp32, eps from
// attrs.eps (config.json's rms_norm_eps).
#include <stdexcept>

#include "vkamp/graph/op.hpp"
#include "vkamp/ops/layer_norm.hpp"

namespace vkamp::graph {

OpDef rms_norm_op() {
  OpDef d;
  d.name = "rms_norm";
  d.min_inputs = d.max_inputs = 2;
  d.params_from = 1;
  d.backward_reads_inputs = true;  // xhat from x and the kept rstd
  d.infer = [](const OpShapes& s) {
    const uint32_t c = s.in[0]->shape.c;
    if (s.in[1]->dims.size() != 1 || s.in[1]->dims[0] != c)
      throw std::invalid_argument("'" + s.in[1]->name + "' must be {" + std::to_string(c) + "}");
    if (!(s.node.attrs.eps > 0)) throw std::invalid_argument("eps must be above 0");
    return s.in[0]->shape;
  };
  // (0, rstd) in fp32 per normalised row: 8 bytes, 4 elements of the smallest format.
  d.kept_per_row = [](const OpShapes& s) { return uint64_t(4) * s.in[0]->shape.positions(); };
  d.forward = [](OpRun& r) {
    const uint32_t c = r.shapes.out.c, rows = r.rows * r.shapes.in[0]->shape.positions();
    ops::rms_norm_forward(r.seq, r.fmt, r.in(0), r.in(1), r.out(), r.kept(), rows, c, float(r.shapes.node.attrs.eps));
  };
  d.backward = [](OpRun& r) {
    const uint32_t c = r.shapes.out.c, rows = r.rows * r.shapes.in[0]->shape.positions();
    if (r.wants_grad(1)) {  // not for a frozen weight
      const GradTarget dw = r.grad(1);
      ops::rms_norm_backward_weight(r.seq, r.fmt, r.in(0), r.kept(), r.dout(), dw.view, rows, c, dw.accumulate);
    }
    if (r.wants_grad(0)) {
      const GradTarget dx = r.grad(0);
      ops::rms_norm_backward_input(r.seq, r.fmt, r.in(0), r.in(1), r.kept(), r.dout(), dx.view, rows, c,
                                   dx.accumulate);
    }
  };
  return d;
}

}  // namespace vkamp::graph
