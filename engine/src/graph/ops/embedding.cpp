// embedding: GPT's input layer. Inputs ids (a sequence of token ids, the
// graph's input), wte {vocab, c} and optionally wpe {positions, c}; the
// output is the sequence wte[id] + wpe[position], or wte[id] alone
// (Llama's embed_tokens) (ops/embedding.hpp). The ids take no
// gradient; wte may also be the lm_head's weight (tied), and its gradient is
// then the sum of both uses.
#include <optional>
#include <stdexcept>

#include "vkamp/error.hpp"
#include "vkamp/graph/op.hpp"
#include "vkamp/ops/embedding.hpp"

namespace vkamp::graph {

namespace {
bool positions(const OpRun& r) { return r.shapes.in.size() == 3; }
}  // namespace

OpDef embedding_op() {
  OpDef d;
  d.name = "embedding";
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.params_from = 1;
  d.reads_ids = true;
  d.backward_reads_inputs = true;  // the ids choose the rows of dwte
  d.infer = [](const OpShapes& s) {
    const Shape& ids = s.in[0]->shape;
    if (!ids.ids) throw std::invalid_argument("embedding reads token ids (a tokens input)");
    const auto& wte = s.in[1]->dims;
    if (wte.size() != 2) throw std::invalid_argument("'" + s.in[1]->name + "' must be {vocab, channels}");
    if (s.in.size() < 3) return Shape::sequence(ids.w, wte[1]);
    const auto& wpe = s.in[2]->dims;
    if (wpe.size() != 2 || wpe[0] != ids.w || wpe[1] != wte[1])
      throw std::invalid_argument("'" + s.in[2]->name + "' must be {" + std::to_string(ids.w) + ", " +
                                  std::to_string(wte[1]) + "}");
    return Shape::sequence(ids.w, wte[1]);
  };
  d.forward = [](OpRun& r) {
    const auto& wte = r.shapes.in[1]->dims;
    const uint32_t T = r.shapes.out.w;
    const std::optional<BufferView> wpe = positions(r) ? std::optional(r.in(2)) : std::nullopt;
    ops::embedding_forward(r.seq, r.fmt, r.in(0), r.in(1), wpe, r.out(), r.rows * T, T, wte[1], wte[0], r.blocks(1));
  };
  d.backward = [](OpRun& r) {
    const auto& wte = r.shapes.in[1]->dims;
    const uint32_t T = r.shapes.out.w;
    // A frozen table takes no gradient (a fine-tune's embed_tokens).
    if (!r.wants_grad(1)) {
      if (positions(r) && r.wants_grad(2)) throw Error("embedding: a frozen wte with a trained wpe");
      return;
    }
    GradTarget dwte = r.grad(1);
    std::optional<GradTarget> dwpe;
    if (positions(r)) dwpe = r.grad(2);
    ops::embedding_backward(r.seq, r.fmt, r.in(0), r.dout(), dwte.view,
                            dwpe ? std::optional(dwpe->view) : std::nullopt, r.rows * T, T, wte[1], wte[0],
                            {dwte.accumulate, dwpe && dwpe->accumulate});
  };
  return d;
}

}  // namespace vkamp::graph
