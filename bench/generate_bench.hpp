// vkamp-bench generate: a GPT's text generation, one token at a time, with
// the KV cache against the full window (bench/generate_bench.cpp).
#pragma once
#include <string>
#include <vector>

#include "vkamp/float_formats.hpp"

namespace vkamp::bench {

extern const char* const kGenerateHelp;

// size: "tiny" or "medium"; repeats 0: automatic. Returns the exit status.
int run_generate(const std::string& device, int repeats, const std::string& size, std::vector<Format> formats);

}  // namespace vkamp::bench
