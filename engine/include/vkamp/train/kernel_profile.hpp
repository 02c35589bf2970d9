// --profile's view of a step's GPU time: each dispatch's timestamps (read
// after the step, no host wait inside it) summed by op class, and the
// costliest dispatches by their place in the step.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vkamp/sequence.hpp"

namespace vkamp::train {

// The op classes, in the order a profile prints them; bench/torch_charlm.py
// maps PyTorch's kernels onto the same names.
const std::vector<std::string>& kernel_classes();
// The class of a dispatch label ("gemm_reduce" -> "gemm", "attention_fused"
// -> "attention", "add" -> "elementwise"); "other" for the rest.
std::string kernel_class(std::string_view label);

struct DispatchShare {
  uint32_t index = 0;  // its place among the step's dispatches
  std::string label;
  double ms = 0;       // mean GPU time per step
};

class KernelProfile {
 public:
  // One timed step's dispatches.
  void add(const std::vector<DispatchTime>& timings);
  // GPU ms per step by class (every class, in kernel_classes() order).
  std::vector<std::pair<std::string, double>> by_class() const;
  // The `n` costliest dispatches, over the steps laid out as the first
  // timed one (a step with other dispatches, a histogram step say, is left
  // out of this ranking).
  std::vector<DispatchShare> top(size_t n) const;

 private:
  std::vector<double> class_ms_;
  uint32_t steps_ = 0;
  std::vector<DispatchShare> per_place_;  // summed; per step on reading
  uint32_t place_steps_ = 0;
};

}  // namespace vkamp::train
