// Executor: activation recomputation (--recompute), the step's timeline.
//
// A block is a run of consecutive steps whose names share one
// `<path>.<number>.` prefix (`model.layers.3.`, `transformer.h.3.`: how
// Hugging Face names the modules of a ModuleList, and so every decoder
// block vkamp builds). With recomputation the backward records, just
// before the backward of a block's last step, the forward of the block's
// steps again, and the backward then reads what that second forward wrote:
// between the two, only what a block hands on is kept (its input, the
// residual stream), not the activations inside it.
//
// A step runs again only where that is safe and useful:
// - its output is read by no step after the block (it is what the block
//   hands on, so it is kept anyway), and it is no view, no parameter's cast
//   (bound to the master) and not the graph's output;
// - its forward stages no state for the update pass (an op with a commit,
//   BatchNorm): a second forward would stage it twice;
// - the backward needs it: its output or kept scratch is read by a
//   backward, or by another step that runs again.
// The second forward runs the same kernels on the same inputs (dropout
// draws its mask from the same counter, the node's name and the
// micro-batch), so the gradients are the same bits as without it.
//
// The timeline: forward step k at time k, the loss at N, then backward in
// reverse step order, one time each, with the second forward's steps
// before the backward of their block's last step. Without recomputation a
// backward's time is 2N - k, as before.
#include <algorithm>

#include "vkamp/graph/executor.hpp"
#include "executor_state.hpp"

namespace vkamp::graph {
namespace {

// The name up to and including its first dotted component of digits alone;
// "" where there is none (a step in no block).
std::string block_of(const std::string& name) {
  size_t begin = 0;
  while (begin < name.size()) {
    size_t end = name.find('.', begin);
    if (end == std::string::npos) return "";
    if (end > begin && std::all_of(name.begin() + long(begin), name.begin() + long(end),
                                   [](char c) { return c >= '0' && c <= '9'; }))
      return name.substr(0, end + 1);
    begin = end + 1;
  }
  return "";
}

}  // namespace

Executor::Timeline Executor::timeline(bool recompute) const {
  const size_t N = steps_.size();
  Timeline t;
  t.back.assign(N, 0);
  t.again.assign(N, -1);
  t.again_before.assign(N, {});
  std::vector<bool> again(N, false);
  const int out_root = root_[graph_.output_index()];
  // Per root tensor, the steps that read it (views read nothing: their
  // readers read the root).
  std::vector<std::vector<size_t>> readers(tensors_.size());
  for (size_t k = 0; k < N; ++k) {
    if (nodes_[k]->def->view) continue;
    for (const std::string& name : steps_[k].inputs) {
      std::vector<size_t>& r = readers[root_[index(name)]];
      if (r.empty() || r.back() != k) r.push_back(k);
    }
  }
  std::vector<std::string> block(N);
  for (size_t k = 0; k < N; ++k) block[k] = block_of(steps_[k].name);
  bool any = false;
  for (size_t s = 0; s < N;) {
    size_t e = s;  // the block is [s, e]
    while (e + 1 < N && block[e + 1] == block[s]) ++e;
    if (!block[s].empty())
      for (size_t p = e + 1; p-- > s;) {  // readers first: they say whether p is needed
        const NodeState& n = *nodes_[p];
        const int out = index(steps_[p].name);
        const std::vector<size_t>& r = readers[out];
        if (n.def->view || root_[out] != out || out == out_root || cast_param_[out] >= 0 || n.def->commit) continue;
        if (std::any_of(r.begin(), r.end(), [&](size_t k) { return k > e; })) continue;
        const bool reads_output = n.runs_backward && n.def->backward_reads_output && n.def->backward_reads_output(n.shapes);
        const bool keeps = n.def->kept_per_row && n.def->kept_per_row(n.shapes);
        const bool needed =
            reads_output || (keeps && n.runs_backward) || std::any_of(r.begin(), r.end(), [&](size_t k) {
              const NodeState& reader = *nodes_[k];
              return again[k] || (reader.runs_backward && (reader.def->backward_reads_inputs || keeps));
            });
        again[p] = needed;
        any = any || needed;
      }
    s = e + 1;
  }
  t.recomputable = any;
  uint32_t time = uint32_t(N) + 1;  // the loss at N
  for (size_t k = N; k-- > 0;) {
    const bool ends_block = k + 1 == N || block[k + 1] != block[k];
    if (recompute && ends_block && !block[k].empty()) {
      // The block's steps that run again, in forward order.
      size_t s = k;
      while (s > 0 && block[s - 1] == block[k]) --s;
      for (size_t j = s; j <= k; ++j)
        if (again[j]) {
          t.again[j] = time++;
          t.again_before[k].push_back(j);
        }
    }
    t.back[k] = time++;
  }
  return t;
}

}  // namespace vkamp::graph
