// Device memory for activations: every buffer has a lifetime (first and
// last step of the recorded forward + backward timeline that touches it),
// and buffers whose lifetimes do not meet share bytes. Greedy first-fit
// over one pool, largest buffers first: each is placed at the lowest
// aligned offset that overlaps no placed buffer alive at the same time.
#pragma once
#include <cstdint>
#include <map>
#include <vector>

#include "vkamp/device_blocks.hpp"
#include "vkamp/float_formats.hpp"

namespace vkamp::graph {

struct Lifetime {
  uint64_t bytes = 0;
  uint32_t first = 0, last = 0;  // inclusive
};

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // one per Lifetime, in the order given
  uint64_t pool_bytes = 0;        // the pool's size
  uint64_t unshared_bytes = 0;    // what separate buffers would take
};

// Every offset a multiple of blocks.alignment, and no buffer crossing a
// block's end (device_blocks.hpp); vkamp::Error for a buffer larger than a block.
MemoryPlan plan_memory(const std::vector<Lifetime>& buffers, const BlockLayout& blocks);
inline MemoryPlan plan_memory(const std::vector<Lifetime>& buffers, uint64_t alignment) {
  return plan_memory(buffers, BlockLayout{UINT64_MAX, alignment});
}

// Device memory of a model, by purpose, in bytes.
struct MemoryReport {
  uint64_t parameters = 0;       // fp32 masters, 16-bit working copy and gradients; fp32 buffers and node state
  uint64_t optimizer_state = 0;  // moments
  uint64_t activations = 0;      // activations and their gradients (planned)
  uint64_t activations_unshared = 0;  // the same without reuse
  // The activation buffers by storage format, without reuse (precision
  // levels: O1 stores some in fp32; one pool holds them all).
  std::map<Format, uint64_t> activations_by_format;
  // --recompute: whether this plan recomputes, and the activations and
  // workspace the other setting would plan (0: the graph has no block to
  // recompute).
  bool recompute = false;
  uint64_t activations_other_recompute = 0, workspace_other_recompute = 0;
  uint64_t workspace = 0;        // op scratch (im2col, gradient sums)
  uint64_t logits = 0;           // of activations: the logits and their gradient (whole, or one chunk's)
  uint64_t frozen = 0;           // frozen parameters (a fine-tune's base), in the storage format only
  uint64_t total() const { return parameters + optimizer_state + activations + workspace + frozen; }
  // total() under the other --recompute setting (what a budget check
  // offers as a setting that would fit); total() where there is none.
  uint64_t total_other_recompute() const {
    if (!activations_other_recompute) return total();
    return total() - activations - workspace + activations_other_recompute + workspace_other_recompute;
  }
};

}  // namespace vkamp::graph
