// vkamp-bench attention: causal attention's three paths (materialized,
// fused, mma) and the fused ones' tile sizes at charlm's shapes
// (bench/attention_bench.cpp).
#pragma once
#include <string>
#include <vector>

#include "vkamp/float_formats.hpp"

namespace vkamp::bench {

extern const char* const kAttentionHelp;

// sizes: charlm's (tiny, small, medium, gpt2); tiles: "device" or what
// VKAMP_ATTENTION_TILES takes, one fused case each; repeats 0: automatic.
// Returns the exit status.
int run_attention(const std::string& device, int repeats, const std::vector<std::string>& sizes,
                  const std::vector<std::string>& tiles, std::vector<Format> formats);

}  // namespace vkamp::bench
