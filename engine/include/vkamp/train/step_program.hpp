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
#include "vkamp/train/layer_scales.hpp"
#include "vkamp/config/train_config.hpp"
#include "vkamp/train/model.hpp"
#include "vkamp/train/step_params.hpp"
#include "vkamp/train/step_ring.hpp"

namespace vkamp::train {

class StepProgram {
 public:
  // `max_attempts`: the steps the fault-injection mask covers. `rank` and
  // `ranks`: this process's place in a data-parallel run (--inject-rank
  // picks whose gradients --inject-overflow poisons). With ranks > 1 the
  // micro-batch gradients always go through the fp32 sum (ACCUMULATED, even
  // with grad_accum 1): that sum is what the ranks all-reduce.
  StepProgram(Context& ctx, const config::TrainConfig& cfg, LossKind loss, Model& model, BatchFeeder& feeder,
              StepParams& params, StepRing& ring, uint32_t max_attempts, uint32_t rank = 0, uint32_t ranks = 1);

  // amp_check workgroups for `params` gradients, each reducing a share.
  static uint32_t partials_for(uint32_t params);
  void record(Sequence& seq);
  // The same step in two parts (StepRing's split mode): the micro-batches,
  // then the decision and the update.
  void record_micro_batches(Sequence& seq);
  void record_update(Sequence& seq);
  // What a data-parallel run all-reduces between the parts: the fp32
  // gradient sum and the per-micro-batch mean losses (grad_accum floats).
  Buffer& grad_sum() { return *grad_sum_; }
  Buffer& loss_values() { return *loss_values_; }
  // Per-layer loss scaling's state; nullptr in the other modes.
  LayerScales* layer_scales() { return layer_scales_.get(); }
  // Writes an inf into a gradient at attempt `step` (between steps).
  // Returns true when this armed the injection pass (the first live
  // injection of a run without --inject-overflow): the step must then be
  // recorded again to hold it.
  bool inject_overflow_at(uint32_t step);

 private:
  // Returns the sequence it ended in (--sync-bn cuts it, StepRing::cut).
  Sequence& record_micro_batch(Sequence& seq, uint32_t m);
  void record_loss(Sequence& seq, uint32_t m);
  void record_decision_and_update(Sequence& seq);

  Context& ctx_;
  Format fmt_;
  LossKind loss_;
  uint32_t batch_, micro_batches_, max_attempts_, partials_;
  bool accumulated_;  // the gradients go through grad_sum_ (grad_accum > 1, or ranks > 1)
  config::OptimizerKind optimizer_;
  Model& model_;
  BatchFeeder& feeder_;
  StepParams& params_;
  StepRing& ring_;
  std::unique_ptr<Buffer> partial_sq_, partial_bad_, loss_values_, row_loss_, reduce_scratch_;
  std::unique_ptr<Buffer> hist_, tensor_ranges_, inject_mask_;
  std::unique_ptr<Buffer> tensor_stats_;  // this step's TensorStats, per tensor (amp_check -> step_control)
  std::unique_ptr<Buffer> grad_sum_;  // fp32 sum of the micro-batch gradients (accumulated_)
  bool injects_ = false;               // the injection pass is recorded
  bool live_ = false;                  // TrainConfig::live_fault_injection: the pass may be armed later
  std::vector<uint32_t> inject_bits_;  // host copy of inject_mask_
  // The optimizer's dispatches: parameter elements [first, end), with or
  // without weight decay, unscaled by the global scale or (per-layer
  // scaling) by one group's (kNoScaleGroup: the global).
  struct DecayRun {
    uint32_t first = 0, end = 0;
    bool decay = true;
    uint32_t group = 0xFFFFFFFFu;
  };
  // tensor_group: per tensor, its scale group; empty without per-layer scaling.
  static std::vector<DecayRun> decay_runs(const std::vector<graph::ParamTensor>& tensors, uint32_t total,
                                          bool matrices_only, const std::vector<uint32_t>& tensor_group = {});
  std::vector<DecayRun> decay_runs_;
  // Per-layer loss scaling (--loss-scale per-layer): the groups' scales.
  std::unique_ptr<LayerScales> layer_scales_;
};

}  // namespace vkamp::train
