// The step's settings and state on the GPU: the TrainParams the step
// shaders read (loss scaling, overflow policy, optimizer, schedule,
// clipping), the TrainState they update, Adam's bias-correction table and
// the learning-rate table.
// Built from a TrainConfig; the scaler part can change between steps.
#pragma once
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/config/train_config.hpp"
#include "vkamp/train/gpu_state.hpp"

namespace vkamp::train {

// The sizes the shaders need besides the config.
struct StepShape {
  uint32_t budget = 0;          // optimizer updates to apply
  uint32_t tensors = 0;         // parameter tensors
  uint32_t partials = 0;        // amp_check workgroups
  uint32_t ring_size = 0;       // step records
  uint32_t hist_ring_size = 0;  // histogram slots
};

// The chooser's whole-exponent edges of a format (scale_choice.h):
// log2 of its smallest subnormal and floor(log2) of its largest value.
struct FormatExponents {
  int sub_exp = 0, normal_exp = 0, top_exp = 0;  // log2 of the smallest subnormal and normal; floor(log2(max))
};
FormatExponents format_exponents(Format f);
// The chooser's range of k: ceil(log2(min_loss_scale)) ..
// floor(log2(max_loss_scale)), within what 2^k in fp32 can be.
std::pair<int, int> scale_exponent_range(const config::ScalerConfig& sc);

// TrainParams for `cfg` (bias_table_len stays 0: the table sets it).
TrainParams train_params(const config::TrainConfig& cfg, const StepShape& shape);

// Adam's bias corrections (1 - beta1^t, 1 - beta2^t) for t = 1, 2, ...,
// flattened; empty for SGD. Ends at the budget, or where both round to 1.
std::vector<float> bias_correction_table(const config::OptimizerConfig& oc, uint32_t budget);

// The learning rate of applied update k = 0 .. budget - 1 (one entry for a
// constant rate): step_control.comp reads it instead of computing it.
std::vector<float> lr_schedule_table(const config::OptimizerConfig& oc, uint32_t budget);

// The optimizer.comp specialization constant for `k`.
uint32_t optimizer_code(config::OptimizerKind k);

class StepParams {
 public:
  StepParams(Context& ctx, const config::TrainConfig& cfg, const StepShape& shape);

  Buffer& params() { return *params_; }
  Buffer& state() { return *state_; }
  Buffer& bias_corrections() { return *bias_correction_; }
  Buffer& lr_table() { return *lr_table_; }
  // --loss-scale auto's window and choices (scale_choice.h): zeroed at the
  // start, read and written with the checkpoint.
  Buffer& auto_scale() { return *auto_scale_; }
  AutoScaleState read_auto_scale();
  void write_auto_scale(const AutoScaleState& a);

  // Plain reads and writes of the state: the caller has waited for the steps in flight.
  TrainState read_state();
  void write_state(const TrainState& st);

  // New scaler knobs between steps (the steps in flight waited for): the
  // params change, and the current scale is clamped into [min, max] (or set,
  // for a static scale).
  void set_scaler(const config::ScalerConfig& sc, uint32_t grad_accum);

 private:
  std::unique_ptr<Buffer> params_, state_, bias_correction_, lr_table_, auto_scale_;
};

}  // namespace vkamp::train
