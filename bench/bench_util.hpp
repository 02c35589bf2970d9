// What every vkamp-bench command shares: random operands and the median
// (the engine's, which the GEMM tuner times with too), and its context.
#pragma once
#include <string>

#include "vkamp/context.hpp"
#include "vkamp/measure.hpp"

namespace vkamp::bench {

using vkamp::median;
using vkamp::random_buffer;

// The context a benchmark runs on: the device chosen by `device`, with the
// validation layer off (a benchmark measures the driver, not the layer).
inline ContextOptions bench_context_options(const std::string& device) {
  ContextOptions opt;
  opt.device = device;
  opt.validation = false;
  return opt;
}

}  // namespace vkamp::bench
