#include "vkamp/train/underflow.hpp"

#include <bit>
#include <cmath>

namespace vkamp::train {

std::optional<int> headroom_doublings(Format fmt, float max_abs) {
  if (!(max_abs > 0) || !std::isfinite(max_abs)) return std::nullopt;
  // m = fm * 2^em and max = fM * 2^eM with fm, fM in [0.5, 1): m * 2^k <= max
  // holds for k = eM - em exactly when fm <= fM, and 2 fm >= 1 > fM rules
  // out one more.
  int em = 0, eM = 0;
  const double fm = std::frexp(double(max_abs), &em), fM = std::frexp(format_max(fmt), &eM);
  return eM - em - (fm > fM ? 1 : 0);
}

float max_abs_of(uint32_t max_abs_bits) { return std::bit_cast<float>(max_abs_bits); }

UnderflowShares underflow_shares(Format fmt, const TensorStats& s, uint64_t elements) {
  UnderflowShares u;
  if (elements > 0) {
    u.zeros = double(s.zeros) / double(elements);
    u.subnormal = double(s.subnormal) / double(elements);
    u.lost_unscaled = double(s.lost_unscaled) / double(elements);
  }
  u.headroom = headroom_doublings(fmt, max_abs_of(s.max_abs_bits));
  return u;
}

}  // namespace vkamp::train
