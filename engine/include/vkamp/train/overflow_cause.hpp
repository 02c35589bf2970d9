// Why a run's gradients kept overflowing, judged from what its step records
// showed the host (no extra GPU work): the fail-fast message names the
// likely cause instead of always the learning rate.
//   - The loss was never finite, before any update: the forward pass itself
//     overflowed on the data as given (a value that is not finite, or past
//     the format's range, among the inputs or targets).
//   - The loss was finite but every step overflowed from the first, before
//     any update: the gradients are too large from the start (large inputs
//     or targets, or the initialization).
//   - Updates were applied before the overflows began: the training
//     diverged (the learning rate, or the model).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "vkamp/float_formats.hpp"
#include "vkamp/train/step_metrics.hpp"

namespace vkamp::train {

class OverflowCause {
 public:
  // Each record that did something, in step order.
  void add(const StepMetrics& m);
  // The step the overflows the run ended on began at.
  uint32_t overflows_from() const { return run_from_; }
  // The likely cause and what to do, a clause for the fail-fast message;
  // `injected`: --inject-overflow covers overflows_from().
  std::string explain(Format precision, bool injected) const;

 private:
  bool finite_loss_seen_ = false;
  bool in_run_ = false;
  uint32_t run_from_ = 0, applied_at_run_ = 0;
  std::optional<uint32_t> first_nonfinite_loss_;
};

}  // namespace vkamp::train
