// The loss-scale rule written out on the CPU, as DESIGN.md section 5 states
// it (PyTorch's _amp_update_scale_, with DeepSpeed's hysteresis), for the
// GPU trajectories to be checked against step by step.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "vkamp/train/config.hpp"

namespace vkamp::test {

struct ScalerReference {
  explicit ScalerReference(const train::ScalerConfig& c)
      : cfg(c), scale(float(c.initial_scale)), hysteresis_left(std::max(1u, c.hysteresis)) {}

  // Advances one step; returns the scale that step used.
  float step(bool found_inf) {
    float used = scale;
    if (found_inf) {
      if (hysteresis_left <= 1) scale = std::max(scale * float(cfg.backoff_factor), float(cfg.min_scale));
      else --hysteresis_left;
      tracker = 0;
    } else if (++tracker >= cfg.growth_interval) {
      float grown = scale * float(cfg.growth_factor);
      if (std::isfinite(grown)) scale = std::min(grown, float(cfg.max_scale));
      tracker = 0;
      hysteresis_left = std::max(1u, cfg.hysteresis);
    }
    return used;
  }

  train::ScalerConfig cfg;
  float scale;
  uint32_t tracker = 0;
  uint32_t hysteresis_left;
};

}  // namespace vkamp::test
