#include "vkamp/train/underflow_scope.hpp"

#include <bit>

#include "vkamp/graph/param_layout.hpp"

namespace vkamp::train {

UnderflowShares UnderflowScope::of_step(const StepMetrics& m) const {
  TensorStats s{};
  s.zeros = m.zeros;
  s.subnormal = m.subnormal;
  s.lost_unscaled = m.lost_unscaled;
  s.max_abs_bits = std::bit_cast<uint32_t>(m.max_abs_grad);
  return underflow_shares(precision, s, total);
}

UnderflowShares UnderflowScope::of_tensor(size_t i, const TensorStats& s) const {
  return underflow_shares(precision, s, i < elements.size() ? elements[i] : 0);
}

UnderflowScope underflow_scope(Format precision, const std::vector<graph::ParamTensor>& tensors) {
  UnderflowScope scope;
  scope.precision = precision;
  for (const graph::ParamTensor& t : tensors) {
    scope.tensors.push_back(t.name);
    scope.elements.push_back(t.size);
    scope.total += t.size;
  }
  return scope;
}

bool per_tensor_step(uint32_t step, uint32_t histogram_interval) {
  return histogram_interval != 0 && step % histogram_interval == 0;
}

}  // namespace vkamp::train
