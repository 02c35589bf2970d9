#include "vkamp/graph/scale_groups.hpp"

#include "vkamp/config_error.hpp"

namespace vkamp::graph {
namespace {

ConfigError not_a_chain(const std::string& what) {
  return ConfigError("--loss-scale per-layer needs a chain of layers (one scale per layer): " + what +
               "; use --loss-scale dynamic for this model");
}

}  // namespace

ScaleGroups scale_groups(const Graph& g, const std::vector<Node>& steps) {
  const auto& tensors = g.tensors();
  // Per tensor: the group of the step producing it (-1: an input, a
  // parameter, or computed from inputs alone: no gradient flows there).
  std::vector<int> group_of(tensors.size(), -1);
  std::vector<std::string> param_user(tensors.size());
  std::vector<std::vector<size_t>> consumers(tensors.size());
  ScaleGroups out;
  for (size_t k = 0; k < steps.size(); ++k) {
    const Node& n = steps[k];
    bool owns_params = false;
    for (const std::string& name : n.inputs) {
      int t = g.tensor_index(name);
      consumers[t].push_back(k);
      if (tensors[t].kind != TensorKind::Param) continue;
      owns_params = true;
      if (!param_user[t].empty())
        throw not_a_chain("parameter '" + name + "' is used by both '" + param_user[t] + "' and '" + n.name + "'");
      param_user[t] = n.name;
    }
    // The groups of the inputs a gradient flows back into.
    int from = -1;
    for (const std::string& name : n.inputs) {
      int t = g.tensor_index(name), h = group_of[t];
      if (h < 0) continue;
      if (from >= 0 && h != from)
        throw not_a_chain("node '" + n.name + "' joins the outputs of layers '" + out.groups[from].node + "' and '" +
                          out.groups[h].node + "'");
      if (owns_params && name != n.inputs[0])
        throw not_a_chain("node '" + n.name + "' takes a layer's output as input '" + name + "', not as its input 0");
      from = h;
    }
    int mine = from;
    if (owns_params) {
      ScaleGroup sg{n.name, k, from, {}};
      for (const std::string& name : n.inputs)
        if (tensors[g.tensor_index(name)].kind == TensorKind::Param) sg.params.push_back(name);
      mine = int(out.groups.size());
      out.groups.push_back(std::move(sg));
    }
    group_of[g.tensor_index(n.name)] = mine;
  }
  // A gradient that crosses a boundary must be the gradient of that one
  // crossing: the boundary's input is read by nothing else.
  for (const ScaleGroup& sg : out.groups) {
    if (sg.upstream < 0) continue;
    const std::string& input = steps[sg.step].inputs[0];
    const auto& readers = consumers[g.tensor_index(input)];
    if (readers.size() > 1) {
      size_t other = readers[0] == sg.step ? readers[1] : readers[0];
      throw not_a_chain("tensor '" + input + "' feeds both '" + sg.node + "' and '" + steps[other].name +
                        "', so its gradient would sum two scales");
    }
  }
  out.output_group = group_of[g.output_index()];
  return out;
}

}  // namespace vkamp::graph
