#include "fuse_epilogues.hpp"

#include "vkamp/knobs.hpp"

namespace vkamp::graph {

bool epilogue_fusion_enabled() {
  return env_switch("VKAMP_FUSE_EPILOGUE", true);
}

std::vector<Node> fuse_epilogues(const Graph& g) {
  const std::vector<Node>& nodes = g.nodes();
  if (!epilogue_fusion_enabled()) return nodes;
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
  return out;
}

}  // namespace vkamp::graph
