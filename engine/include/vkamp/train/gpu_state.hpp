// Host mirrors of the std430 structs in shaders/common/train_state.glsl.
// Every field is 4 bytes, so std430 lays them out like C; the asserts pin
// the sizes the shaders expect.
#pragma once
#include <cstddef>
#include <cstdint>

namespace vkamp::train {

struct TrainState {
  float grad_multiplier;
  float scale;
  uint32_t growth_tracker;
  uint32_t hysteresis_left;
  uint32_t step;
  uint32_t applied;
  uint32_t cursor;
  uint32_t retries;
  uint32_t skipped_total;
  uint32_t overflow_total;
  uint32_t overflows_at_min;
  uint32_t failed;
  uint32_t done;
  uint32_t apply;
  float inv_scale;
  float clip_coef;
  float lr;
  float bias_correction1;
  float bias_correction2;
  uint32_t replay;
  uint32_t nonfinite_master;  // ~index of the lowest non-finite master weight, 0 = none
  uint32_t pad[3];
};
static_assert(sizeof(TrainState) == 24 * 4);

struct TrainParams {
  uint32_t scale_mode;  // 0 none, 1 static, 2 dynamic
  float growth_factor;
  float backoff_factor;
  uint32_t growth_interval;
  float min_scale;
  float max_scale;
  uint32_t hysteresis;
  uint32_t consecutive_hysteresis;
  uint32_t policy;  // 0 skip, 1 apply, 2 retry
  uint32_t max_retries;
  uint32_t fail_after;
  uint32_t budget;
  uint32_t micro_batches;
  uint32_t histogram_interval;
  uint32_t optimizer;  // 0 sgd, 1 adam, 2 adamw
  float base_lr;
  float momentum;
  float beta1, beta2, eps;
  float weight_decay;
  uint32_t schedule;  // 0 constant, 1 step, 2 cosine
  uint32_t warmup_steps;
  uint32_t step_size;
  float gamma;
  float max_norm;
  float max_value;
  uint32_t ring_size;
  uint32_t hist_ring_size;
  uint32_t tensors;
  uint32_t partials;
  uint32_t bias_table_len;
};
static_assert(sizeof(TrainParams) == 32 * 4);

struct StepRecord {
  uint32_t step;
  float loss;
  float loss_scale;
  uint32_t skipped;
  uint32_t overflow;
  float grad_norm;
  float lr;
  uint32_t retries;
  uint32_t applied;
  uint32_t cursor;
  uint32_t done;
  uint32_t failed;
  int32_t hist_slot;
  uint32_t idle;
  uint32_t replay;
  uint32_t nonfinite_master;
};
static_assert(sizeof(StepRecord) == 16 * 4);
static_assert(offsetof(TrainState, nonfinite_master) == 20 * 4);
static_assert(offsetof(StepRecord, nonfinite_master) == 15 * 4);

// Exponent histogram layout (amp_check.comp): 56 log2 bins covering
// [2^-40, 2^16), then zero, inf, NaN.
inline constexpr int kHistLogBins = 56;
inline constexpr int kHistMinExp = -40;
inline constexpr int kHistZero = 56, kHistInf = 57, kHistNan = 58;
inline constexpr int kHistBins = 59;

}  // namespace vkamp::train
