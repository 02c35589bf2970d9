#include "vkamp/measure.hpp"

#include <algorithm>
#include <cstdint>

#include "vkamp/quant/quantize.hpp"

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

Buffer random_blocks(Context& ctx, quant::GgmlType t, size_t n, std::mt19937& gen) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  std::vector<uint8_t> blocks((quant::ggml_row_bytes(t, n) + 3) / 4 * 4, 0);
  quant::quantize_rows_in_parallel(t, v.data(), blocks.data(), n);
  Buffer b(ctx, std::max<size_t>(blocks.size(), 16));
  b.write(blocks.data(), blocks.size());
  return b;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace vkamp
