// vkamp-bench reduce: the reductions over rows of charlm medium (bench/reduce_bench.cpp).
#pragma once
#include <string>
#include <vector>

#include "vkamp/float_formats.hpp"

namespace vkamp::bench {

extern const char* const kReduceHelp;

// repeats 0: automatic. Returns the process exit status.
int run_reduce(const std::string& device, int repeats, uint32_t batch, std::vector<Format> formats);

}  // namespace vkamp::bench
