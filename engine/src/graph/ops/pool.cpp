// max_pool and avg_pool over an image: attributes window and stride (no
// padding; ops/pool.hpp).
#include <stdexcept>

#include "vkamp/graph/op.hpp"
#include "vkamp/ops/pool.hpp"

namespace vkamp::graph {
namespace {

ops::Pool2d pool_of(const OpShapes& s, uint32_t rows) {
  const Shape& x = s.in[0]->shape;
  return {.kind = s.node.op == "max_pool" ? ops::PoolKind::Max : ops::PoolKind::Average, .batch = rows,
          .in_h = x.h, .in_w = x.w, .channels = x.c, .window = s.node.attrs.window, .stride = s.node.attrs.stride};
}

OpDef pool_op(const char* name) {
  OpDef d;
  d.name = name;
  d.backward_reads_inputs = true;  // max pooling routes the gradient by recomputing the maxima
  d.infer = [](const OpShapes& s) {
    const Shape& x = s.in[0]->shape;
    const Attributes& a = s.node.attrs;
    if (!x.image) throw std::invalid_argument(s.node.op + " needs an image input");
    if (a.window == 0 || a.stride == 0) throw std::invalid_argument("window and stride must be positive");
    if (a.window > x.h || a.window > x.w)
      throw std::invalid_argument("window " + std::to_string(a.window) + " is larger than the input " + to_string(x));
    ops::Pool2d p = pool_of(s, 1);
    return Shape::picture(p.out_h(), p.out_w(), x.c);
  };
  d.forward = [](OpRun& r) { ops::pool2d_forward(r.seq, r.fmt, pool_of(r.shapes, r.rows), r.in(0), r.out()); };
  d.backward = [](OpRun& r) {
    r.overwrite_grad(0, [&](BufferView dx) {
      ops::pool2d_backward(r.seq, r.fmt, pool_of(r.shapes, r.rows), r.in(0), r.dout(), dx);
    });
  };
  return d;
}

}  // namespace

OpDef max_pool_op() { return pool_op("max_pool"); }
OpDef avg_pool_op() { return pool_op("avg_pool"); }

}  // namespace vkamp::graph
