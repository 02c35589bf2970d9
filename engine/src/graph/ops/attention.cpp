// attention: nanoGPT's causal multi-head self-attention between its two
// Linears. Input qkv, a sequence of 3c features (q | k | v, c_attn's
// output); attribute heads (c divisible by it); output a sequence of c
// (ops/attention.hpp). Softmax in fp32, scores scaled by 1/sqrt(c / heads).
#include <stdexcept>

#include "vkamp/graph/op.hpp"
#include "vkamp/ops/attention.hpp"

namespace vkamp::graph {

namespace {

ops::AttentionShape attention_shape(const OpRun& r) {
  const Shape& out = r.shapes.out;
  return {r.rows, out.w, out.c, r.shapes.node.attrs.heads};
}

// The path, and so the scratch, depends on the device (ops/attention.hpp).
const Context& device(const OpShapes& s) {
  if (!s.ctx) throw std::logic_error("attention: the scratch sizes are asked before the executor set the device");
  return *s.ctx;
}

}  // namespace

OpDef attention_op() {
  OpDef d;
  d.name = "attention";
  d.computes_in_16_bits_at_o1 = true;  // a GEMM
  d.infer = [](const OpShapes& s) {
    const Shape& x = s.in[0]->shape;
    const uint32_t heads = s.node.attrs.heads;
    if (x.image || x.c % 3 != 0) throw std::invalid_argument("attention reads a sequence of q | k | v (3 x channels)");
    if (heads == 0 || (x.c / 3) % heads != 0)
      throw std::invalid_argument(std::to_string(x.c / 3) + " channels do not split into " + std::to_string(heads) +
                                  " heads");
    return Shape::sequence(x.w, x.c / 3);
  };
  // The backward reads the input (q, k and v) and what the forward keeps
  // (the probabilities, or the fused path's logsumexp; that path's
  // D = dy . y reads the output too).
  d.backward_reads_inputs = true;
  d.backward_reads_output = [](const OpShapes& s) {
    return ops::attention_fused(device(s), s.out.c, s.node.attrs.heads);
  };
  d.kept_per_row = [](const OpShapes& s) {
    return ops::attention_kept_elements(device(s), s.fmt, s.out.w, s.out.c, s.node.attrs.heads);
  };
  d.workspace_per_row = [](const OpShapes& s) {
    return ops::attention_workspace_elements(device(s), s.fmt, s.out.w, s.out.c, s.node.attrs.heads);
  };
  d.forward = [](OpRun& r) { ops::attention_forward(r.seq, r.fmt, r.in(0), r.out(), r.kept(), attention_shape(r)); };
  d.backward = [](OpRun& r) {
    GradTarget dqkv = r.grad(0);
    ops::attention_backward(r.seq, r.fmt, r.in(0), r.out(), r.kept(), r.dout(), dqkv.view, r.workspace(), attention_shape(r),
                            dqkv.accumulate);
  };
  return d;
}

}  // namespace vkamp::graph
