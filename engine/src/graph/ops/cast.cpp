// cast: a tensor in another storage format, inserted by the executor where a
// step reads a tensor stored in a format other than its own (precision
// levels, precision_plan.hpp). The forward converts the value; the backward
// converts the gradient back, adding to what the source's gradient holds
// with one rounding. A parameter read in fp32 is bound to its fp32 master by
// the executor (exact, no kernel); only its gradient is converted, into the
// 16-bit gradient buffer. Graphs do not name this op: it is not registered.
#include "vkamp/error.hpp"
#include "vkamp/graph/op.hpp"
#include "vkamp/ops/convert.hpp"

namespace vkamp::graph {
namespace {

bool of_param(const OpShapes& s) { return s.in[0]->kind == TensorKind::Param; }
uint32_t elements(const OpRun& r) {
  return of_param(r.shapes) ? uint32_t(elements(*r.shapes.in[0])) : r.rows * r.shapes.out.elements();
}

}  // namespace

OpDef cast_op() {
  OpDef d;
  d.name = "cast";
  d.infer = [](const OpShapes& s) { return s.in[0]->shape; };
  d.forward = [](OpRun& r) {
    const Format from = r.shapes.in_fmts.at(0), to = r.fmt;
    if (of_param(r.shapes)) {
      if (to != Format::F32) throw Error("cast '" + r.shapes.node.name + "': a parameter is read in fp32 or its own format");
      return;  // the executor binds the fp32 master
    }
    if (to == Format::F32) ops::convert_to_f32(r.seq, from, r.in(0), r.out(), elements(r));
    else if (from == Format::F32) ops::convert_from_f32(r.seq, to, r.in(0), r.out(), elements(r));
    else throw Error("cast '" + r.shapes.node.name + "': between two 16-bit formats");
  };
  d.backward = [](OpRun& r) {
    const Format from = r.shapes.in_fmts.at(0), to = r.fmt;
    GradTarget dx = r.grad(0);
    if (to == Format::F32) ops::convert_from_f32(r.seq, from, r.dout(), dx.view, elements(r), dx.accumulate);
    else ops::convert_to_f32(r.seq, to, r.dout(), dx.view, elements(r), dx.accumulate);
  };
  return d;
}

}  // namespace vkamp::graph
