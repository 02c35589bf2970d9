// The training state that lives on the GPU, written once for both sides:
// this file is valid GLSL (the step shaders include it) and C++ (gpu_state.hpp
// includes it inside namespace vkamp::train). Every field is a 4-byte scalar,
// so std430 lays the structs out exactly as C++ does. The codes stored in
// TrainParams (scale_mode, policy, optimizer) are in step_codes.h.
//
// A setting the GPU reads is a settings row (config/training_settings.cpp)
// and its TrainConfig field, a field here under the same name, the line in
// step_params.cpp that copies it, and the shader that reads it.
#ifndef VKAMP_TRAIN_STATE_H
#define VKAMP_TRAIN_STATE_H

#ifdef __cplusplus
#define VKAMP_UINT_CONST(name, value) inline constexpr int name = value;
#define VKAMP_INT_CONST(name, value) inline constexpr int name = value;
#define VKAMP_FUNCTION inline
#else
#define VKAMP_UINT_CONST(name, value) const uint name = uint(value);
#define VKAMP_INT_CONST(name, value) const int name = value;
#define VKAMP_FUNCTION
#endif

// Advanced by step_control.comp every step; the host writes it once (and on
// --resume) and reads it back only when a run stops.
struct TrainState {
  float grad_multiplier;     // S / micro-batches (grad_multiplier()): read by the loss gradients
  float scale;               // the loss scale S of the current step
  uint growth_tracker;       // clean steps since the last growth or overflow
  uint hysteresis_left;      // overflows still tolerated before a backoff
  uint step;                 // steps attempted (replays after the run stopped don't count)
  uint applied;              // optimizer updates applied: drives lr and budget
  uint cursor;               // batches consumed
  uint retries;              // recomputations of the current batch
  uint skipped_total;
  uint overflow_total;
  uint overflows_at_min;     // consecutive overflows with S at min_loss_scale
  uint failed;               // fail-fast tripped
  uint done;                 // budget reached: later replays change nothing
  // Decisions for this step's optimizer pass, written by step_control.
  uint apply;
  float inv_scale;
  float clip_coef;
  float lr;
  float bias_correction1;
  float bias_correction2;
  uint replay;               // replays of the step since this trainer started (ring index)
  // ~i for the lowest index i of a non-finite fp32 master weight after an
  // applied update (optimizer.comp, atomicMax), 0 while all are finite:
  // zero-initialised state and old checkpoints read as "none".
  uint nonfinite_master;
  uint pad2, pad3, pad4;
};

// Set once by the host (step_params.cpp). The scaler's and optimizer's
// fields carry their settings' names (steps_per_increase is the YAML key
// and flag --steps-per-increase).
struct TrainParams {
  uint scale_mode;           // kScale* (step_codes.h)
  float growth_factor;
  float backoff_factor;
  uint steps_per_increase;   // clean steps before the scale grows
  float min_loss_scale;
  float max_loss_scale;
  uint hysteresis;
  uint consecutive_hysteresis;
  uint policy;               // kPolicy* (step_codes.h)
  uint max_retries;
  uint fail_after_overflows; // consecutive overflows at min_loss_scale that stop the run (0 = never)
  uint budget;               // optimizer updates to apply
  uint micro_batches;
  uint histogram_interval;   // 0 = never
  uint optimizer;            // kOptimizer* (step_codes.h)
  float base_lr;
  float momentum;
  float beta1, beta2, eps;
  float weight_decay;
  uint lr_table_len;         // entries of the learning-rate table (>= 1)
  float max_norm;            // 0 = off
  float max_value;           // 0 = off
  uint ring_size;            // metrics records
  uint hist_ring_size;       // histogram slots
  uint tensors;              // parameter tensors (histograms per tensor)
  uint partials;             // amp_check workgroups
  uint bias_table_len;       // Adam: entries of the bias-correction table
  // --loss-scale auto (scale_choice.h, step_control.comp): the chooser's
  // settings and range.
  uint auto_warmup;          // steps of dynamic scaling before the first choice
  uint auto_recheck;         // steps between re-checks
  uint auto_overflow_tolerance;  // overflowed steps a window takes before its re-check comes at once
  float underflow_target;    // fraction of the elements allowed to flush to zero
  int scale_exp_lo;          // ceil(log2(min_loss_scale)): the lowest 2^k the chooser takes
  int scale_exp_hi;          // floor(log2(max_loss_scale))
  int format_normal_exp;     // log2 of the format's smallest normal (the chooser's underflow edge)
  int format_top_exp;        // floor(log2) of the format's largest value
};

// One per step, in a host-visible ring the host reads a few steps later.
struct StepRecord {
  uint step;
  float loss;
  float loss_scale;
  uint skipped;
  uint overflow;
  float grad_norm;
  float lr;
  uint retries;
  uint applied;
  uint cursor;
  uint done;
  uint failed;
  int hist_slot;             // histogram ring slot, or -1
  uint idle;                 // the run had already stopped: nothing happened
  uint replay;               // TrainState.replay of this record
  uint nonfinite_master;     // TrainState.nonfinite_master when the record was written
  // Underflow accounting, summed over every tensor's TensorStats below.
  uint zeros;
  uint subnormal;
  uint lost_unscaled;
  uint max_abs_bits;
};

// Underflow accounting (amp_check.comp, every step), per parameter tensor,
// of the gradient the step checked: the 16-bit gradient, or the fp32 sum of
// the micro-batches, both carrying the loss scale S. Published per step in a
// ring beside the step records (StepRing::tensor_stats_of).
struct TensorStats {
  uint zeros;          // exactly zero (either sign)
  uint subnormal;      // nonzero and below the 16-bit format's smallest normal
  // Nonzero, yet |v| / S would round to zero in the format (at or below half
  // its smallest subnormal): the gradients the loss scale is saving.
  uint lost_unscaled;
  uint nonfinite;      // inf or NaN
  // The largest finite |v| as fp32 bits (non-negative floats order as their
  // bits do), 0 when there is none: the headroom is how many doublings of S
  // remain before it passes the format's largest value.
  uint max_abs_bits;
};

// The factor the loss gradients carry: the loss scale, divided by the
// micro-batches a step sums (each micro-batch's loss is a mean).
VKAMP_FUNCTION float grad_multiplier(float scale, uint micro_batches) { return scale / float(micro_batches); }

// Exponent histograms (amp_check.comp), per parameter tensor: 56 log2 bins
// covering [2^-40, 2^16), one per binade, then zero, inf and NaN.
VKAMP_UINT_CONST(kHistLogBins, 56)
VKAMP_INT_CONST(kHistMinExp, -40)
VKAMP_UINT_CONST(kHistZero, 56)
VKAMP_UINT_CONST(kHistInf, 57)
VKAMP_UINT_CONST(kHistNan, 58)
VKAMP_UINT_CONST(kHistBins, 59)

#undef VKAMP_UINT_CONST
#undef VKAMP_INT_CONST
#undef VKAMP_FUNCTION
#endif
