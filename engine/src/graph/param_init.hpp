// A parameter's starting values from its Init, drawn from `gen` (so a
// seed gives the same values in the same declaration order): Kaiming- or
// Xavier-uniform from the fans as PyTorch takes them (a weight is {out,
// receptive field..., in}), nn.Linear's default, normal with init_std, or
// the constants 0 and 1, which draw nothing.
#pragma once
#include <cmath>
#include <random>
#include <vector>

#include "vkamp/graph/graph.hpp"

namespace vkamp::graph {

inline std::vector<float> initial_values(const Tensor& t, std::mt19937_64& gen) {
  std::vector<float> v(elements(t), t.init == Init::One ? 1.0f : 0.0f);
  if (t.init == Init::Normal) {
    std::normal_distribution<double> dist(0.0, t.init_std);
    for (float& x : v) x = float(dist(gen));
    return v;
  }
  if ((t.init != Init::Kaiming && t.init != Init::Xavier && t.init != Init::TorchLinear) || t.dims.size() < 2) return v;
  double field = 1;
  for (size_t i = 1; i + 1 < t.dims.size(); ++i) field *= t.dims[i];
  const double fan_in = field * t.dims.back(), fan_out = field * t.dims.front();
  const double bound = t.init == Init::Kaiming       ? std::sqrt(6.0 / fan_in)
                       : t.init == Init::TorchLinear ? 1.0 / std::sqrt(fan_in)
                                                     : std::sqrt(6.0 / (fan_in + fan_out));
  std::uniform_real_distribution<double> dist(-bound, bound);
  for (float& x : v) x = float(dist(gen));
  return v;
}

}  // namespace vkamp::graph
