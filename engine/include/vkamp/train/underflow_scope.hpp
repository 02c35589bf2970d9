// What the underflow accounting's counts are shares of: the run's gradient
// format (the headroom is measured against its largest value) and the
// elements of each parameter tensor. The run summary, --metrics and the
// dashboard read StepMetrics and TensorUnderflow through it, so that all
// three say the same thing.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vkamp/train/step_metrics.hpp"
#include "vkamp/train/underflow.hpp"

namespace vkamp::graph {
struct ParamTensor;
}

namespace vkamp::train {

struct UnderflowScope {
  Format precision = Format::F16;
  std::vector<std::string> tensors;  // in Model::tensors() order
  std::vector<uint64_t> elements;    // per tensor
  uint64_t total = 0;                // their sum: what a step's totals are shares of

  bool empty() const { return total == 0; }
  // A step's totals (StepMetrics) as shares of every gradient element.
  UnderflowShares of_step(const StepMetrics& m) const;
  // Tensor i's counts as shares of its elements.
  UnderflowShares of_tensor(size_t i, const TensorStats& s) const;
};

UnderflowScope underflow_scope(Format precision, const std::vector<graph::ParamTensor>& tensors);

// The steps whose per-tensor accounting is logged and kept for plotting:
// those that also take the gradient histograms (every histogram_interval
// steps from step 0; none when it is 0), so the two line up in --metrics.
bool per_tensor_step(uint32_t step, uint32_t histogram_interval);

}  // namespace vkamp::train
