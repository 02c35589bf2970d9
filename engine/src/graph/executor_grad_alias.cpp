// Executor: a sum's input gradients in the sum's own gradient buffer.
// y = a + b gives dA = dB = dY, so the add's backward would copy dY twice;
// where it is the first to write dA (it reads a last), dA can be dY's very
// buffer instead, and whatever else reads a (a residual stream's LayerNorm)
// then adds its part there, in its own kernel. Along a chain of residual
// blocks the stream's gradient stays in one buffer and no copy is made.
// KernelPaths::fuse_residual_grad off keeps the copies.
#include <algorithm>
#include <numeric>

#include "vkamp/graph/executor.hpp"
#include "executor_state.hpp"

namespace vkamp::graph {

std::vector<int> Executor::sum_gradient_homes(const std::vector<std::optional<Lifetime>>& grads) const {
  std::vector<int> home(tensors_.size());
  std::iota(home.begin(), home.end(), 0);
  if (!ctx_.paths().fuse_residual_grad.value_or(true)) return home;
  const int out_root = root_[graph_.output_index()];
  // Per root tensor: the steps whose backward adds to its gradient.
  std::vector<std::vector<size_t>> writers(tensors_.size());
  for (size_t k = 0; k < steps_.size(); ++k)
    for (size_t i = 0; i < steps_[k].inputs.size(); ++i)
      if (nodes_[k]->shapes.grads[i]) writers[root_[index(steps_[k].inputs[i])]].push_back(k);
  // Backward order, so that y's own home is known before its inputs join it.
  for (size_t k = steps_.size(); k-- > 0;) {
    const Node& n = steps_[k];
    const int y = root_[index(n.name)];
    if (n.op != "add" || y == out_root || !grads[y]) continue;
    // An input this add writes first (the last step to read it), with a
    // buffer of its own (not the loss's, a parameter's or a cast's).
    auto takes_dy = [&](int t) {
      return grads[t] && t != out_root && cast_param_[t] < 0 && writers[t].back() == k;
    };
    const int a = root_[index(n.inputs[0])], b = root_[index(n.inputs[1])];
    if (a == b) continue;
    std::vector<int> joining;
    for (int t : {a, b})
      if (takes_dy(t)) joining.push_back(t);
    // Both in one buffer only while one is still read as dY by its
    // producer's backward (a residual branch) and the other gets no other
    // part until then: the branch has no other reader, and every other
    // reader of the stream comes before the branch's producer.
    if (joining.size() == 2) {
      auto fits = [&](int stream, int branch) {
        if (writers[branch].size() != 1 || producer_[branch] < 0) return false;
        return std::all_of(writers[stream].begin(), writers[stream].end(),
                           [&](size_t w) { return w == k || int(w) < producer_[branch]; });
      };
      if (!fits(a, b) && !fits(b, a)) joining.pop_back();
    }
    for (int t : joining) home[t] = home[y];
  }
  return home;
}

}  // namespace vkamp::graph
