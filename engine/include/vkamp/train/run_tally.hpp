// What a training run adds up from its step records: counts, the last
// loss, throughput, the GPU time per step by kernel and the underflow
// accounting, for TrainSummary.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vkamp/sequence.hpp"
#include "vkamp/train/kernel_profile.hpp"
#include "vkamp/train/step_metrics.hpp"
#include "vkamp/train/underflow_scope.hpp"

namespace vkamp::train {

struct TrainSummary {
  uint32_t steps = 0;     // attempted (records seen)
  uint32_t applied = 0, skipped = 0, overflows = 0;
  float final_scale = 0, last_loss = 0;
  bool failed = false;
  std::string failure;
  double seconds = 0;              // training time: held-out evaluations between epochs excluded
  double samples_per_second = 0;  // applied updates x batch x micro-batches / s
  double eval_seconds = 0;         // the held-out evaluations between epochs
  uint64_t host_waits_in_loop = 0;  // blocking reads while stepping (must stay 0)
  uint64_t host_waits_between_epochs = 0;  // draining for on_epoch_end (and its evaluation)
  uint64_t pacing_waits = 0;
  // Data-parallel runs (world > 1): the ranks, and the host waits of the
  // step split around the gradient all-reduce (two per step: part A before
  // the exchange, part B before the next step; see step_ring.hpp), which
  // host_waits_in_loop leaves out. Zero in a single-process run.
  uint32_t ranks = 1;
  uint64_t host_waits_for_allreduce = 0;
  uint64_t host_waits_for_replica_checks = 0;
  double allreduce_ms_per_step = 0;     // read back + MPI_Allreduce + write, per exchange
  uint64_t allreduce_bytes_per_step = 0;  // fp32 gradients and losses each rank sends
  uint32_t local_overflow_steps = 0;     // steps whose gradients overflowed on this rank, before the sum
  double gpu_ms_per_step = 0;       // mean over records with a time
  double amp_ms_per_step = 0;       // inject + amp_check + step_control
  // GPU ms per step by kernel label, summed over the layers, largest first.
  std::vector<std::pair<std::string, double>> kernel_ms_per_step;
  // The same by op class (kernel_profile.hpp), and the ten costliest dispatches.
  std::vector<std::pair<std::string, double>> class_ms_per_step;
  std::vector<DispatchShare> top_dispatches;
  // The commands recorded for one step: the fixed cost of replaying it.
  CommandCounts commands_per_step;
  // The underflow accounting (amp_check, every step; underflow_scope.hpp)
  // as shares of the gradient elements, over the steps that ran.
  struct Underflow {
    // What the loss scale saved (nonzero gradients that would flush to zero
    // unscaled): the mean over the steps, and the last step's.
    double lost_unscaled_mean = 0, lost_unscaled_last = 0;
    double zeros_mean = 0, subnormal_mean = 0;
    // The fewest doublings of the scale left before the largest gradient
    // overflows, over the steps that did not overflow (nullopt: none had a
    // nonzero finite gradient).
    std::optional<int> min_headroom;
    // The tensor with the largest mean lost_unscaled share, and that share
    // (empty when no tensor lost any).
    std::string worst_tensor;
    double worst_tensor_lost_unscaled = 0;
  } underflow;
};

class RunTally {
 public:
  void start() { t0_ = std::chrono::steady_clock::now(); }
  // Adds a step that ran; fills m.step_time_ms from the slot's timings.
  void add(StepMetrics& m, const std::vector<DispatchTime>& timings);
  // What the underflow counts are shares of; set before the first step
  // (without it the summary's underflow stays empty).
  void set_underflow_scope(UnderflowScope scope);
  // A step's per-tensor accounting (after add() of its record).
  void add(const TensorUnderflow& u);
  // Updates applied before this trainer started (a resumed run).
  void set_applied(uint32_t applied) { summary_.applied = applied; }
  // Time spent outside training (an evaluation between epochs): left out
  // of seconds and samples_per_second.
  void exclude(double seconds) { summary_.eval_seconds += seconds; }
  // The summary so far; `samples_per_step` is batch x micro-batches.
  TrainSummary summary(uint32_t samples_per_step) const;

 private:
  TrainSummary summary_;
  double gpu_ms_sum_ = 0, amp_ms_sum_ = 0;
  uint32_t timed_steps_ = 0;
  std::map<std::string, double> kernel_ms_sum_;
  KernelProfile profile_;
  UnderflowScope scope_;
  double lost_unscaled_sum_ = 0, zeros_sum_ = 0, subnormal_sum_ = 0;
  std::vector<double> tensor_lost_unscaled_sum_;  // per tensor, over tensor_steps_
  uint32_t tensor_steps_ = 0;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

}  // namespace vkamp::train
