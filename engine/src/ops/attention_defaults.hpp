// Attention's compiled-in choices per device (attention_defaults.txt): the
// path and tile sizes a run takes when VKAMP_ATTENTION and
// VKAMP_ATTENTION_TILES are unset.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

namespace vkamp::ops::detail {

struct AttentionDefaults {
  std::string path;                                    // fused, mma or materialized
  std::pair<uint32_t, uint32_t> fused_tiles, mma_tiles;  // {rows, positions a tile}
};

// The first row for a CPU driver (cpu) or another device, of this vendor.
// A malformed table or one without a matching row is an Error (the tests
// read every device type).
AttentionDefaults attention_defaults(bool cpu, uint32_t vendor);

}  // namespace vkamp::ops::detail
