// concat: vectors joined along the feature axis, any number of inputs.
#include <stdexcept>

#include "vkamp/graph/op.hpp"
#include "vkamp/ops/concat.hpp"

namespace vkamp::graph {

OpDef concat_op() {
  OpDef d;
  d.name = "concat";
  d.min_inputs = 2;
  d.max_inputs = 64;
  d.infer = [](const OpShapes& s) {
    uint64_t cols = 0;
    for (const Tensor* t : s.in) {
      if (t->shape.image) throw std::invalid_argument("input '" + t->name + "' is an image; flatten it first");
      cols += t->shape.c;
    }
    if (cols > 0xFFFFFFFFull) throw std::invalid_argument("over 2^32 features");
    return Shape::vector(uint32_t(cols));
  };
  d.forward = [](OpRun& r) {
    std::vector<ops::ConcatPart> parts;
    for (size_t i = 0; i < r.shapes.in.size(); ++i) parts.push_back({r.in(i), r.shapes.in[i]->shape.c});
    ops::concat_forward(r.seq, r.fmt, parts, r.out(), r.rows);
  };
  d.backward = [](OpRun& r) {
    std::vector<ops::ConcatPart> parts;
    for (size_t i = 0; i < r.shapes.in.size(); ++i) {
      ops::ConcatPart p{r.dout(), r.shapes.in[i]->shape.c, false, !r.wants_grad(i)};
      if (!p.skip) {
        GradTarget dx = r.grad(i);
        p.data = dx.view;
        p.accumulate = dx.accumulate;
      }
      parts.push_back(p);
    }
    ops::concat_backward(r.seq, r.fmt, r.dout(), parts, r.rows);
  };
  return d;
}

}  // namespace vkamp::graph
