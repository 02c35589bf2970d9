// The order examples are visited in: one seeded permutation per epoch,
// computed on the host when first asked for, for any number of epochs.
// Epoch e's order depends only on (seed, e), so a resumed run, a streamed
// run and a GPU-resident run all see the same examples in the same order.
#pragma once
#include <cstdint>
#include <vector>

namespace vkamp::train {

class EpochOrder {
 public:
  EpochOrder(uint32_t count, uint64_t seed) : count_(count), seed_(seed) {}

  // The permutation of epoch `epoch` (count entries). The reference stays
  // valid until an epoch other than this one and the one before it is asked for.
  const std::vector<uint32_t>& of(uint32_t epoch);

 private:
  struct Cached {
    uint32_t epoch = UINT32_MAX;
    std::vector<uint32_t> order;
  };
  uint32_t count_;
  uint64_t seed_;
  Cached cache_[2];  // consecutive micro-batches span at most two epochs
};

}  // namespace vkamp::train
