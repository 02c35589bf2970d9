// The training state that lives on the GPU, shared by the step shaders.
// Mirrored field for field by engine/include/vkamp/train/gpu_state.hpp
// (static_asserts there pin the offsets).
#ifndef VKAMP_TRAIN_STATE_GLSL
#define VKAMP_TRAIN_STATE_GLSL

struct TrainState {
  float grad_multiplier;     // S / micro-batches: read by the loss gradients
  float scale;               // the loss scale S of the current step
  uint growth_tracker;       // clean steps since the last growth or overflow
  uint hysteresis_left;      // overflows still tolerated before a backoff
  uint step;                 // steps attempted (replays after the run stopped don't count)
  uint applied;              // optimizer updates applied: drives lr and budget
  uint cursor;               // batches consumed
  uint retries;              // recomputations of the current batch
  uint skipped_total;
  uint overflow_total;
  uint overflows_at_min;     // consecutive overflows with S at min_scale
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

// Set once by the host.
struct TrainParams {
  uint scale_mode;           // kScale* (step_codes.h)
  float growth_factor;
  float backoff_factor;
  uint growth_interval;
  float min_scale;
  float max_scale;
  uint hysteresis;
  uint consecutive_hysteresis;
  uint policy;               // kPolicy* (step_codes.h)
  uint max_retries;
  uint fail_after;
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
};

const uint kHistLogBins = 56;   // [2^-40, 2^16), one bin per binade
const uint kHistZero = 56;
const uint kHistInf = 57;
const uint kHistNan = 58;
const uint kHistBins = 59;
const int kHistMinExp = -40;

#endif
