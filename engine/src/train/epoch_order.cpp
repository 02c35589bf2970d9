#include "vkamp/train/epoch_order.hpp"

#include <algorithm>
#include <numeric>
#include <random>

namespace vkamp::train {

const std::vector<uint32_t>& EpochOrder::of(uint32_t epoch) {
  for (const Cached& c : cache_)
    if (c.epoch == epoch) return c.order;
  // Replace the older of the two.
  Cached& slot = cache_[0].epoch == UINT32_MAX || (cache_[1].epoch != UINT32_MAX && cache_[0].epoch < cache_[1].epoch)
                     ? cache_[0]
                     : cache_[1];
  slot.epoch = epoch;
  slot.order.resize(count_);
  std::iota(slot.order.begin(), slot.order.end(), 0u);
  // The same generator and seeding as every vkamp release before streaming,
  // so their runs (and checkpoints) see the same batches.
  std::mt19937_64 gen(seed_ * 0x9E3779B97F4A7C15ull + epoch + 1);
  std::shuffle(slot.order.begin(), slot.order.end(), gen);
  return slot.order;
}

}  // namespace vkamp::train
