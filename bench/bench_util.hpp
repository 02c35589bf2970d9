// What every vkamp-bench command shares: random operands and the median.
#pragma once
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/float_formats.hpp"

namespace vkamp::bench {

// A device buffer of n random values in [-1, 1), in the format.
inline Buffer random_buffer(Context& ctx, Format fmt, size_t n, std::mt19937& gen) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  auto bytes = pack(fmt, v);
  Buffer b(ctx, std::max<size_t>(bytes.size(), 4));
  b.write(bytes.data(), bytes.size());
  return b;
}

// The context a benchmark runs on: the device chosen by `device`, with the
// validation layer off (a benchmark measures the driver, not the layer).
inline ContextOptions bench_context_options(const std::string& device) {
  ContextOptions opt;
  opt.device = device;
  opt.validation = false;
  return opt;
}

// The median of v (the mean of the middle two for an even count).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace vkamp::bench
