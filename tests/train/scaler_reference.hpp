// The dynamic loss-scale rule on the CPU, written from the two public
// implementations vkamp says it follows (docs/design.md#loss-scaling), not from
// shaders/step_control.comp:
//
// - PyTorch, aten/src/ATen/native/cuda/AmpKernels.cu, amp_update_scale_cuda_kernel
//   (the CPU twin is _amp_update_scale_cpu_kernel in native/cpu/AmpGradScalerKernels.cpp):
//     if found_inf: scale *= backoff; growth_tracker = 0
//     else: successful = growth_tracker + 1
//           if successful == growth_interval:
//             new_scale = float(scale * growth); if isfinite(new_scale): scale = new_scale
//             growth_tracker = 0
//           else: growth_tracker = successful
// - DeepSpeed, deepspeed/runtime/fp16/loss_scaler.py, DynamicLossScaler.update_scale
//   (microsoft/DeepSpeed at 03365187873a648f9292863117ac4ce1a6135fd7):
//     if overflow: if delayed_shift == 1 or cur_hysteresis == 1:
//                    cur_scale = max(cur_scale / scale_factor, min_scale)
//                  else: cur_hysteresis -= 1
//                  last_overflow_iter = cur_iter
//     else: if consecutive_hysteresis: cur_hysteresis = delayed_shift
//           if (cur_iter - last_overflow_iter) % scale_window == 0:
//             if not consecutive_hysteresis: cur_hysteresis = delayed_shift
//             cur_scale *= scale_factor
//     cur_iter += 1
//   DeepSpeed's "clean steps since the last overflow, modulo the window" is
//   PyTorch's growth tracker (reset on an overflow and at each growth), so
//   one counter serves both. (Newer DeepSpeed, deepspeedai/DeepSpeed, grows
//   on the (window + 1)-th clean step instead; vkamp keeps PyTorch's count.)
//
// vkamp's documented extensions (docs/config.md, docs/design.md#loss-scaling,
// config.hpp ScalerConfig): separate growth and backoff factors (PyTorch's)
// with DeepSpeed's floor min_scale; a ceiling max_scale on growth; a
// hysteresis of 0 means 1 (DeepSpeed's delayed_shift is at least 1); and
// the factors and bounds are fp32 values (TrainParams), so the products
// are fp32 products of those, where PyTorch multiplies by a double factor.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "vkamp/config/train_config.hpp"

namespace vkamp::test {

struct ScalerReference {
  explicit ScalerReference(const config::ScalerConfig& c)
      : growth(float(c.growth_factor)),
        backoff(float(c.backoff_factor)),
        min_scale(float(c.min_loss_scale)),
        max_scale(float(c.max_loss_scale)),
        growth_interval(c.steps_per_increase),
        delayed_shift(std::max(1u, c.hysteresis)),
        consecutive_hysteresis(c.consecutive_hysteresis),
        scale(float(c.initial_loss_scale)),
        cur_hysteresis(delayed_shift) {}

  // Advances one step; returns the scale that step ran at.
  float step(bool found_inf) {
    const float used = scale;
    if (found_inf) {
      if (delayed_shift == 1 || cur_hysteresis == 1) scale = std::max(scale * backoff, min_scale);
      else cur_hysteresis -= 1;
      growth_tracker = 0;
      return used;
    }
    if (consecutive_hysteresis) cur_hysteresis = delayed_shift;
    const uint32_t successful = growth_tracker + 1;
    if (successful == growth_interval) {
      const float grown = scale * growth;
      if (std::isfinite(grown)) scale = std::min(grown, max_scale);
      growth_tracker = 0;
      if (!consecutive_hysteresis) cur_hysteresis = delayed_shift;
    } else {
      growth_tracker = successful;
    }
    return used;
  }

  const float growth, backoff, min_scale, max_scale;
  const uint32_t growth_interval, delayed_shift;
  const bool consecutive_hysteresis;
  float scale;
  uint32_t growth_tracker = 0;
  uint32_t cur_hysteresis;
};

}  // namespace vkamp::test
