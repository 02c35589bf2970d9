// The data-parallel step's exchange, between its two parts (StepRing's
// split mode): reads this rank's fp32 gradient sum and per-micro-batch
// losses, sums them over the ranks, divides by the rank count and writes
// them back, so that part B (AMP check, loss-scale decision, optimizer) sees
// the gradient and the loss of the whole N x B-row batch on every rank.
#pragma once
#include <cstdint>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/dist/communicator.hpp"

namespace vkamp::train {

class GradExchange {
 public:
  GradExchange(dist::Communicator& comm, Buffer& grad_sum, Buffer& loss_values);

  void run();
  uint32_t exchanges() const { return exchanges_; }
  // Exchanges where this rank's own gradients held an inf or NaN before the
  // sum: which rank overflowed (after the sum, they all have).
  uint32_t local_overflows() const { return local_overflows_; }
  double seconds() const { return seconds_; }  // read + all-reduce + write back, summed
  // What one exchange sends per rank: the gradients and the losses, fp32.
  uint64_t bytes_per_step() const { return uint64_t(host_.size()) * 4; }

 private:
  dist::Communicator& comm_;
  Buffer &grad_sum_, &loss_values_;
  std::vector<float> host_;  // gradients, then losses: one all-reduce for both
  uint32_t exchanges_ = 0, local_overflows_ = 0;
  double seconds_ = 0;
};

}  // namespace vkamp::train
