// What the trainer reports to its callbacks: each step's record, the
// gradient exponent histograms, and each epoch's end.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vkamp/train/gpu_state.hpp"

namespace vkamp::train {

struct StepMetrics {
  uint32_t step = 0;
  float loss = 0, loss_scale = 0;
  bool skipped = false, overflow = false;
  float grad_norm = 0, lr = 0;
  uint32_t retries = 0;
  double step_time_ms = 0;  // GPU time of the step (timestamps), 0 if unknown
  uint32_t applied = 0, cursor = 0;
  // Underflow accounting over every parameter gradient of the step
  // (TensorStats summed; train/underflow.hpp reads them): elements exactly
  // zero, subnormal in the format, and saved by the scale (they would round
  // to zero unscaled), and the largest finite |gradient| as stored, scaled.
  uint32_t zeros = 0, subnormal = 0, lost_unscaled = 0;
  float max_abs_grad = 0;
};

// The underflow accounting of one step, per parameter tensor.
struct TensorUnderflow {
  uint32_t step = 0;
  float loss_scale = 0;
  std::vector<TensorStats> stats;  // in Model::tensors() order
};

struct TensorHistogram {
  uint32_t step = 0;
  std::string tensor;
  float loss_scale = 0;
  std::array<uint32_t, kHistBins> bins{};
};

struct EpochEnd {
  uint32_t epoch = 0;    // the epochs finished (the one just finished, from 1, unless cfg.eval_every set the point)
  uint32_t step = 0;     // steps attempted so far (skipped and retried ones too)
  uint32_t applied = 0;  // updates applied so far
  // On the held-out set (Trainer::set_held_out), with the weights of the
  // epoch's last update: "accuracy" (SoftmaxXent), "loss" (a language
  // model's mean cross-entropy) or "mse" (MSE); the metric is empty without
  // a held-out set. `loss`: the mean loss on it from the same pass (the
  // cross-entropy; the MSE again for "mse", the value again for "loss").
  std::string metric;
  double value = 0, loss = 0;
};

// The metrics of a step record.
StepMetrics step_metrics(const StepRecord& r);

}  // namespace vkamp::train
