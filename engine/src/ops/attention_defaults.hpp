// Attention's compiled-in choices per device (attention_defaults.txt): the
// path and tile sizes a run takes when VKAMP_ATTENTION and
// VKAMP_ATTENTION_TILES are unset.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

#include "vkamp/context.hpp"

namespace vkamp::ops::detail {

struct AttentionDefaults {
  std::string path;                                    // fused, mma or materialized
  std::pair<uint32_t, uint32_t> fused_tiles, mma_tiles;  // {rows, positions a tile}
};

// The first row for a CPU driver (cpu) or another device, of this vendor.
// A malformed table or one without a matching row is an Error (the tests
// read every device type).
AttentionDefaults attention_defaults(bool cpu, uint32_t vendor);

// The path in effect on ctx: KernelPaths::attention, else the device's row, whose
// mma falls back to fused where the GEMM has no tensor cores (their
// emulation is for tests, never a default).
std::string attention_path(const Context& ctx);

}  // namespace vkamp::ops::detail
