#include "vkamp/graph/precision_plan.hpp"

#include "vkamp/graph/op_registry.hpp"

namespace vkamp::graph {

bool runs_in_16_bits_at_o1(const std::string& op) {
  const OpDef* def = find_op(op);
  return def && def->computes_in_16_bits_at_o1;
}

std::vector<Format> plan_precision(const Graph& g, const std::vector<Node>& steps, Format fmt, AmpLevel level) {
  std::vector<Format> out(steps.size(), fmt);
  if (level == AmpLevel::O2 || level == AmpLevel::O3) return out;
  // The format each tensor is stored in: inputs and parameters in the
  // run's; a step's output in its own. The step writing the model output
  // runs in the run's format (at O0 that is fp32 unless a caller built the
  // model in a 16-bit format: the output buffer stays the run's).
  std::vector<Format> stored(g.tensors().size(), fmt);
  const int output = g.output_index();
  for (size_t k = 0; k < steps.size(); ++k) {
    const Node& n = steps[k];
    const OpDef* def = find_op(n.op);
    const int t = g.tensor_index(n.name);
    if (def && def->view) out[k] = stored[g.tensor_index(n.inputs.at(0))];
    else if (t == output || (level == AmpLevel::O1 && runs_in_16_bits_at_o1(n.op))) out[k] = fmt;
    else out[k] = Format::F32;
    stored[t] = out[k];
  }
  // A view (flatten) as the model output: the step it views writes in the
  // run's format instead.
  for (size_t k = steps.size(); k-- > 0;) {
    if (g.tensor_index(steps[k].name) != output) continue;
    const OpDef* def = find_op(steps[k].op);
    if (!def || !def->view || out[k] == fmt) break;
    const std::string& src = steps[k].inputs.at(0);
    for (size_t j = 0; j < k; ++j)
      if (steps[j].name == src) out[j] = fmt;
    out[k] = fmt;
    break;
  }
  return out;
}

}  // namespace vkamp::graph
