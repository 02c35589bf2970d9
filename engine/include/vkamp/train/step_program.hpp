// The recorded step program: for each micro-batch gather, forward, loss x
// scale, backward (and the fp32 gradient sum); fault injection; then the
// fused AMP check, step_control and the fused optimizer pass. Recorded once
// per in-flight slot and replayed; every decision is made on the GPU.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/sequence.hpp"
#include "vkamp/train/batch_feeder.hpp"
#include "vkamp/train/config.hpp"
#include "vkamp/train/model.hpp"
#include "vkamp/train/step_params.hpp"
#include "vkamp/train/step_ring.hpp"

namespace vkamp::train {

class StepProgram {
 public:
  // `max_attempts`: the steps the fault-injection mask covers.
  StepProgram(Context& ctx, const TrainConfig& cfg, LossKind loss, Model& model, BatchFeeder& feeder,
              StepParams& params, StepRing& ring, uint32_t max_attempts);

  // amp_check workgroups for `params` gradients, each reducing a share.
  static uint32_t partials_for(uint32_t params);
  void record(Sequence& seq);
  // Writes an inf into a gradient at attempt `step` (between steps).
  void inject_overflow_at(uint32_t step);

 private:
  void record_micro_batch(Sequence& seq, uint32_t m);
  void record_loss(Sequence& seq, uint32_t m);
  void record_decision_and_update(Sequence& seq);

  Context& ctx_;
  Format fmt_;
  LossKind loss_;
  uint32_t batch_, micro_batches_, max_attempts_, partials_;
  OptimizerKind optimizer_;
  Model& model_;
  BatchFeeder& feeder_;
  StepParams& params_;
  StepRing& ring_;
  std::unique_ptr<Buffer> partial_sq_, partial_bad_, loss_values_, row_loss_, reduce_scratch_;
  std::unique_ptr<Buffer> hist_, tensor_ranges_, inject_mask_;
  std::unique_ptr<Buffer> grad_sum_;  // fp32 sum of the micro-batch gradients (grad_accum > 1)
  std::vector<uint32_t> inject_bits_;  // host copy of inject_mask_
};

}  // namespace vkamp::train
