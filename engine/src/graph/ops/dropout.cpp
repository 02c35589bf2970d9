// dropout: inverted dropout with probability attrs.p (ops/dropout.hpp) in
// training; the identity in evaluation. Its backward draws the same keeps
// again from the same counter (no mask is stored): the node's name salts
// the draws, the micro-batch and rank pick the stream, and the executor's
// random source gives the seed and the step (Executor::set_random_source).
#include <stdexcept>

#include "vkamp/graph/op.hpp"
#include "vkamp/ops/dropout.hpp"

namespace vkamp::graph {
namespace {

// FNV-1a of the node's name: the same salt in every run of the graph.
uint32_t salt_of(const std::string& name) {
  uint32_t h = 2166136261u;
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  return h;
}

ops::DropoutKey key_of(OpRun& r) {
  const RandomSource src = r.random();
  return {src.seed, src.counter, src.counter_word, r.micro_batch | (src.rank << 16), salt_of(r.shapes.node.name)};
}

}  // namespace

OpDef dropout_op() {
  OpDef d;
  d.name = "dropout";
  d.infer = [](const OpShapes& s) {
    const double p = s.node.attrs.p;
    if (!(p >= 0 && p < 1)) throw std::invalid_argument("the dropout probability p must be in [0, 1)");
    return s.in[0]->shape;
  };
  d.forward = [](OpRun& r) {
    const bool training = r.mode == ForwardMode::Training;
    ops::dropout(r.seq, r.fmt, r.in(0), r.out(), r.rows * r.shapes.out.elements(),
                 training ? r.shapes.node.attrs.p : 0.0, key_of(r));
  };
  d.backward = [](OpRun& r) {
    if (!r.wants_grad(0)) return;
    r.overwrite_grad(0, [&](BufferView dx) {
      ops::dropout(r.seq, r.fmt, r.dout(), dx, r.rows * r.shapes.out.elements(), r.shapes.node.attrs.p, key_of(r));
    });
  };
  return d;
}

}  // namespace vkamp::graph
