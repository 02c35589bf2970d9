// vkamp-bench conv: LeNet-5's convolution and pooling layers (bench/conv_bench.cpp).
#pragma once
#include <string>
#include <vector>

#include "vkamp/float_formats.hpp"

namespace vkamp::bench {

extern const char* const kConvHelp;

// repeats 0: automatic. Returns the process exit status.
int run_conv(const std::string& device, int repeats, uint32_t batch, std::vector<Format> formats);

}  // namespace vkamp::bench
