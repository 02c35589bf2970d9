#include "fuse_epilogues.hpp"

#include "vkamp/ops/activation.hpp"

namespace vkamp::graph {

bool epilogue_fusion_enabled(const KernelPaths& paths) { return paths.fuse_epilogue.value_or(true); }

bool act_grad_fusion_enabled(const KernelPaths& paths) {
  return epilogue_fusion_enabled(paths) && paths.fuse_act_grad.value_or(true);
}

std::vector<Node> fuse_epilogues(const Graph& g, const KernelPaths& paths) {
  const std::vector<Node>& nodes = g.nodes();
  if (!epilogue_fusion_enabled(paths)) return nodes;
  // Per tensor: how many inputs name it, and the last node that does.
  std::vector<int> reads(g.tensors().size(), 0), reader(g.tensors().size(), -1);
  for (size_t k = 0; k < nodes.size(); ++k)
    for (const std::string& name : nodes[k].inputs) {
      int t = g.tensor_index(name);
      ++reads[t];
      reader[t] = int(k);
    }
  std::vector<bool> absorbed(nodes.size(), false);
  std::vector<Node> fused = nodes;
  for (size_t k = 0; k < nodes.size(); ++k) {
    const Node& lin = nodes[k];
    int t = g.tensor_index(lin.name);
    if (lin.op != "linear" || lin.attrs.activate || t == g.output_index() || reads[t] != 1) continue;
    const Node& act = nodes[reader[t]];
    if (act.op != "activation") continue;
    // The linear runs where the activation ran: its inputs all exist by then.
    Node& merged = fused[reader[t]];
    merged = lin;
    merged.name = act.name;
    merged.attrs.act = act.attrs.act;
    merged.attrs.activate = true;
    absorbed[k] = true;
  }
  std::vector<Node> out;
  for (size_t k = 0; k < fused.size(); ++k)
    if (!absorbed[k]) out.push_back(std::move(fused[k]));
  if (!act_grad_fusion_enabled(paths)) return out;
  // The backward pairs: a fused node whose only reader is a linear (as its
  // input x; reads still counts the merged nodes' inputs, which are the
  // activations' own).
  std::vector<int> producer(g.tensors().size(), -1);
  for (size_t k = 0; k < out.size(); ++k) producer[g.tensor_index(out[k].name)] = int(k);
  for (Node& lin : out) {
    if (lin.op != "linear") continue;
    const int t = g.tensor_index(lin.inputs[0]), p = producer[t];
    if (p < 0 || reads[t] != 1 || t == g.output_index()) continue;
    Node& act = out[p];
    if (act.op != "linear" || !act.attrs.activate || !ops::backward_needs_input(act.attrs.act)) continue;
    lin.attrs.dx_is_dz = true;
    act.attrs.dout_is_dz = true;
  }
  return out;
}

}  // namespace vkamp::graph
