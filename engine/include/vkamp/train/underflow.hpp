// Reading the underflow accounting (TensorStats, amp_check.comp): the
// headroom of a scaled gradient, and the shares of a tensor's elements.
#pragma once
#include <cstdint>
#include <optional>

#include "vkamp/float_formats.hpp"
#include "vkamp/train/gpu_state.hpp"

namespace vkamp::train {

// The largest k such that max_abs * 2^k is still at most the format's
// largest value: how many doublings of the loss scale remain before the
// largest gradient overflows (negative once it is already past it, as an
// fp32 micro-batch sum can be). nullopt without a nonzero gradient.
std::optional<int> headroom_doublings(Format fmt, float max_abs);

// TensorStats::max_abs_bits as a float.
float max_abs_of(uint32_t max_abs_bits);

// The underflow accounting of a tensor (or the sum over tensors) of
// `elements` gradients, as shares of the elements.
struct UnderflowShares {
  double zeros = 0, subnormal = 0, lost_unscaled = 0;  // fractions in [0, 1]
  std::optional<int> headroom;
};
UnderflowShares underflow_shares(Format fmt, const TensorStats& s, uint64_t elements);

}  // namespace vkamp::train
