// Host mirrors of the std430 structs in shaders/common/train_state.glsl.
// Every field is 4 bytes, so std430 lays them out like C; the asserts below
// pin each field to its word in the shader's struct, so moving a field on
// one side only fails the build. The codes stored in TrainParams
// (scale_mode, policy, optimizer) are shaders/common/step_codes.h.
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
  uint32_t scale_mode;  // kScale* (step_codes.h)
  float growth_factor;
  float backoff_factor;
  uint32_t growth_interval;
  float min_scale;
  float max_scale;
  uint32_t hysteresis;
  uint32_t consecutive_hysteresis;
  uint32_t policy;  // kPolicy*
  uint32_t max_retries;
  uint32_t fail_after;
  uint32_t budget;
  uint32_t micro_batches;
  uint32_t histogram_interval;
  uint32_t optimizer;  // kOptimizer*
  float base_lr;
  float momentum;
  float beta1, beta2, eps;
  float weight_decay;
  uint32_t lr_table_len;
  float max_norm;
  float max_value;
  uint32_t ring_size;
  uint32_t hist_ring_size;
  uint32_t tensors;
  uint32_t partials;
  uint32_t bias_table_len;
};
static_assert(sizeof(TrainParams) == 29 * 4);

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

// The word of each field in the GLSL struct.
#define VKAMP_AT(S, field, word) static_assert(offsetof(S, field) == (word) * 4, #S "." #field " moved");
VKAMP_AT(TrainState, grad_multiplier, 0)
VKAMP_AT(TrainState, scale, 1)
VKAMP_AT(TrainState, growth_tracker, 2)
VKAMP_AT(TrainState, hysteresis_left, 3)
VKAMP_AT(TrainState, step, 4)
VKAMP_AT(TrainState, applied, 5)
VKAMP_AT(TrainState, cursor, 6)
VKAMP_AT(TrainState, retries, 7)
VKAMP_AT(TrainState, skipped_total, 8)
VKAMP_AT(TrainState, overflow_total, 9)
VKAMP_AT(TrainState, overflows_at_min, 10)
VKAMP_AT(TrainState, failed, 11)
VKAMP_AT(TrainState, done, 12)
VKAMP_AT(TrainState, apply, 13)
VKAMP_AT(TrainState, inv_scale, 14)
VKAMP_AT(TrainState, clip_coef, 15)
VKAMP_AT(TrainState, lr, 16)
VKAMP_AT(TrainState, bias_correction1, 17)
VKAMP_AT(TrainState, bias_correction2, 18)
VKAMP_AT(TrainState, replay, 19)
VKAMP_AT(TrainState, nonfinite_master, 20)
VKAMP_AT(TrainState, pad, 21)
VKAMP_AT(TrainParams, scale_mode, 0)
VKAMP_AT(TrainParams, growth_factor, 1)
VKAMP_AT(TrainParams, backoff_factor, 2)
VKAMP_AT(TrainParams, growth_interval, 3)
VKAMP_AT(TrainParams, min_scale, 4)
VKAMP_AT(TrainParams, max_scale, 5)
VKAMP_AT(TrainParams, hysteresis, 6)
VKAMP_AT(TrainParams, consecutive_hysteresis, 7)
VKAMP_AT(TrainParams, policy, 8)
VKAMP_AT(TrainParams, max_retries, 9)
VKAMP_AT(TrainParams, fail_after, 10)
VKAMP_AT(TrainParams, budget, 11)
VKAMP_AT(TrainParams, micro_batches, 12)
VKAMP_AT(TrainParams, histogram_interval, 13)
VKAMP_AT(TrainParams, optimizer, 14)
VKAMP_AT(TrainParams, base_lr, 15)
VKAMP_AT(TrainParams, momentum, 16)
VKAMP_AT(TrainParams, beta1, 17)
VKAMP_AT(TrainParams, beta2, 18)
VKAMP_AT(TrainParams, eps, 19)
VKAMP_AT(TrainParams, weight_decay, 20)
VKAMP_AT(TrainParams, lr_table_len, 21)
VKAMP_AT(TrainParams, max_norm, 22)
VKAMP_AT(TrainParams, max_value, 23)
VKAMP_AT(TrainParams, ring_size, 24)
VKAMP_AT(TrainParams, hist_ring_size, 25)
VKAMP_AT(TrainParams, tensors, 26)
VKAMP_AT(TrainParams, partials, 27)
VKAMP_AT(TrainParams, bias_table_len, 28)
VKAMP_AT(StepRecord, step, 0)
VKAMP_AT(StepRecord, loss, 1)
VKAMP_AT(StepRecord, loss_scale, 2)
VKAMP_AT(StepRecord, skipped, 3)
VKAMP_AT(StepRecord, overflow, 4)
VKAMP_AT(StepRecord, grad_norm, 5)
VKAMP_AT(StepRecord, lr, 6)
VKAMP_AT(StepRecord, retries, 7)
VKAMP_AT(StepRecord, applied, 8)
VKAMP_AT(StepRecord, cursor, 9)
VKAMP_AT(StepRecord, done, 10)
VKAMP_AT(StepRecord, failed, 11)
VKAMP_AT(StepRecord, hist_slot, 12)
VKAMP_AT(StepRecord, idle, 13)
VKAMP_AT(StepRecord, replay, 14)
VKAMP_AT(StepRecord, nonfinite_master, 15)
#undef VKAMP_AT

// Exponent histogram layout (amp_check.comp): 56 log2 bins covering
// [2^-40, 2^16), then zero, inf, NaN.
inline constexpr int kHistLogBins = 56;
inline constexpr int kHistMinExp = -40;
inline constexpr int kHistZero = 56, kHistInf = 57, kHistNan = 58;
inline constexpr int kHistBins = 59;

}  // namespace vkamp::train
