#include "app/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "vkamp/error.hpp"

namespace vkamp::app {

uint32_t sample_next(const std::vector<float>& logits, const Sampling& s, std::mt19937_64& gen) {
  const uint32_t V = uint32_t(logits.size());
  const float* z = logits.data();
  for (uint32_t v = 0; v < V; ++v)
    if (!std::isfinite(z[v])) throw Error("the model's outputs are not finite; no text to sample");
  if (s.temperature == 0) return uint32_t(std::max_element(z, z + V) - z);
  // Top-k: only logits at least the k-th largest take part.
  float floor = -INFINITY;
  if (s.top_k && s.top_k < V) {
    std::vector<float> sorted(z, z + V);
    std::nth_element(sorted.begin(), sorted.begin() + (s.top_k - 1), sorted.end(), std::greater<float>());
    floor = sorted[s.top_k - 1];
  }
  const double top = *std::max_element(z, z + V);
  std::vector<double> weights(V);
  for (uint32_t v = 0; v < V; ++v) weights[v] = z[v] >= floor ? std::exp((z[v] - top) / s.temperature) : 0.0;
  if (s.top_p < 1) {
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    std::vector<uint32_t> order(V);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return weights[a] > weights[b]; });
    double kept = 0;
    size_t n = 0;
    while (n < V && (n == 0 || kept < s.top_p * total)) kept += weights[order[n++]];
    for (size_t i = n; i < V; ++i) weights[order[i]] = 0;
  }
  return uint32_t(std::discrete_distribution<uint32_t>(weights.begin(), weights.end())(gen));
}

}  // namespace vkamp::app
