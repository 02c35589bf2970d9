#include "vkamp/measure.hpp"

#include <algorithm>

namespace vkamp {

Buffer random_buffer(Context& ctx, Format fmt, size_t n, std::mt19937& gen) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  auto bytes = pack(fmt, v);
  Buffer b(ctx, std::max<size_t>(bytes.size(), 16));
  b.write(bytes.data(), bytes.size());
  return b;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace vkamp
