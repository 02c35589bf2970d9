// rope: Llama's attention input. Inputs q (a sequence of heads x hd
// features), k and v (kv_heads x hd each); attributes heads, kv_heads (0:
// heads) and rope (theta, Llama 3 scaling); output the sequence q' | k' | v'
// of 3 x heads x hd that the attention op reads, q and k rotated and the
// key/value heads repeated (ops/rope.hpp). The cos and sin table, one row
// per position of the sequence, is the node's state, computed on the host.
#include <stdexcept>

#include "vkamp/graph/op.hpp"
#include "vkamp/ops/rope.hpp"

namespace vkamp::graph {

namespace {

uint32_t kv_heads(const Node& n) { return n.attrs.kv_heads ? n.attrs.kv_heads : n.attrs.heads; }
uint32_t head_dim(const OpShapes& s) { return s.in[0]->shape.c / s.node.attrs.heads; }

ops::RopeShape rope_shape(const OpRun& r) {
  const uint32_t t = r.shapes.out.w;
  return {.rows = r.rows * t, .seq = t, .heads = r.shapes.node.attrs.heads, .kv_heads = kv_heads(r.shapes.node),
          .head_dim = head_dim(r.shapes), .table_positions = t};
}

}  // namespace

OpDef rope_op() {
  OpDef d;
  d.name = "rope";
  d.min_inputs = d.max_inputs = 3;
  d.infer = [](const OpShapes& s) {
    const uint32_t heads = s.node.attrs.heads, kv = kv_heads(s.node);
    for (const Tensor* t : s.in)
      if (t->shape.image || t->shape.ids || t->shape.h != 1)
        throw std::invalid_argument("'" + t->name + "' must be a sequence of features");
    const Shape &q = s.in[0]->shape, &k = s.in[1]->shape, &v = s.in[2]->shape;
    if (heads == 0 || q.c % heads) throw std::invalid_argument(std::to_string(q.c) + " query features do not split into " + std::to_string(heads) + " heads");
    const uint32_t hd = q.c / heads;
    if (hd % 2) throw std::invalid_argument("head size " + std::to_string(hd) + " is odd; rotary pairs need it even");
    if (heads % kv) throw std::invalid_argument(std::to_string(heads) + " heads do not share " + std::to_string(kv) + " key/value heads evenly");
    for (const Shape* kvs : {&k, &v})
      if (kvs->w != q.w || kvs->c != kv * hd)
        throw std::invalid_argument("k and v must be " + to_string(Shape::sequence(q.w, kv * hd)) + " (" +
                                    std::to_string(kv) + " heads of " + std::to_string(hd) + ")");
    if (!(s.node.attrs.rope.theta > 0)) throw std::invalid_argument("rope_theta must be above 0");
    return Shape::sequence(q.w, 3 * q.c);
  };
  d.state_floats = [](const OpShapes& s, uint32_t) { return uint64_t(s.out.w) * head_dim(s); };
  d.initial_state = [](const OpShapes& s) { return ops::rope_table(s.node.attrs.rope, head_dim(s), s.out.w); };
  d.forward = [](OpRun& r) {
    ops::rope_forward(r.seq, r.fmt, r.node_state(), r.in(0), r.in(1), r.in(2), r.out(), rope_shape(r));
  };
  d.backward = [](OpRun& r) {
    ops::RopeGrads g{r.dout(), r.dout(), r.dout()};
    g.q = grad_write(r, 0, g.dq);
    g.k = grad_write(r, 1, g.dk);
    g.v = grad_write(r, 2, g.dv);
    ops::rope_backward(r.seq, r.fmt, r.node_state(), r.dout(), g, rope_shape(r));
  };
  return d;
}

}  // namespace vkamp::graph
