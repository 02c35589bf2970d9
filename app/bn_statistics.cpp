#include "app/bn_statistics.hpp"

#include <algorithm>
#include <string_view>

namespace vkamp::app {
namespace {

constexpr std::string_view kMean = ".running_mean";

const graph::ParamTensor* find(const std::vector<graph::ParamTensor>& tensors, const std::string& name) {
  auto it = std::find_if(tensors.begin(), tensors.end(), [&](const graph::ParamTensor& t) { return t.name == name; });
  return it == tensors.end() ? nullptr : &*it;
}

Spread spread(const graph::ParamTensor& t, const std::vector<float>& flat) {
  Spread s;
  if (t.size == 0) return s;
  const float* v = flat.data() + t.offset;
  s.min = *std::min_element(v, v + t.size);
  s.max = *std::max_element(v, v + t.size);
  double sum = 0;  // in double: a wide layer's sum of floats would round
  for (uint32_t i = 0; i < t.size; ++i) sum += v[i];
  s.mean = float(sum / t.size);
  return s;
}

}  // namespace

std::vector<BnLayerStats> bn_layer_stats(const std::vector<graph::ParamTensor>& tensors,
                                         const std::vector<float>& flat) {
  std::vector<BnLayerStats> out;
  for (const graph::ParamTensor& t : tensors) {
    const std::string_view name = t.name;
    if (name.size() <= kMean.size() || name.substr(name.size() - kMean.size()) != kMean) continue;
    BnLayerStats s;
    s.layer = std::string(name.substr(0, name.size() - kMean.size()));
    s.channels = t.size;
    s.running_mean = spread(t, flat);
    if (const graph::ParamTensor* var = find(tensors, s.layer + ".running_var")) s.running_var = spread(*var, flat);
    if (const graph::ParamTensor* n = find(tensors, s.layer + ".num_batches_tracked"); n && n->size)
      s.batches = uint64_t(flat[n->offset]);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace vkamp::app
