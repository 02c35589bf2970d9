#include "vkamp/train/overflow_cause.hpp"

#include <cmath>

namespace vkamp::train {

void OverflowCause::add(const StepMetrics& m) {
  const bool finite = std::isfinite(m.loss);
  finite_loss_seen_ = finite_loss_seen_ || finite;
  if (!finite && !first_nonfinite_loss_) first_nonfinite_loss_ = m.step;
  if (!m.overflow) {
    in_run_ = false;
    return;
  }
  if (in_run_) return;
  in_run_ = true;
  run_from_ = m.step;
  applied_at_run_ = m.applied;  // a step that overflowed applied nothing
}

std::string OverflowCause::explain(Format precision, bool injected) const {
  const std::string fmt = format_name(precision);
  if (injected)
    return "the overflows were injected (--inject-overflow covers step " + std::to_string(run_from_) + ")";
  if (applied_at_run_ == 0 && !finite_loss_seen_)
    return "the loss was not finite at any step, from step 0 on, before any update: the data is the likely cause "
           "(a value that is not finite, or past " + fmt + "'s range, among the inputs or targets; check the data, "
           "standardize it, or train in bf16)";
  if (applied_at_run_ == 0)
    return "every step overflowed from step " + std::to_string(run_from_) + " on, with a finite loss, before any "
           "update: the gradients are past " + fmt + "'s range from the start; large inputs or targets are the "
           "likely cause (standardize them), else the model's initialization (or train in bf16)";
  std::string how = "the overflows began at step " + std::to_string(run_from_) + " after " +
                    std::to_string(applied_at_run_) + (applied_at_run_ == 1 ? " update" : " updates") + " trained";
  if (first_nonfinite_loss_ && *first_nonfinite_loss_ >= run_from_)
    how += ", and the loss turned non-finite at step " + std::to_string(*first_nonfinite_loss_);
  return how + ": the training diverged, so the learning rate (or the model) is the likely cause (lower the "
               "learning rate, clip, or train in bf16/fp32)";
}

}  // namespace vkamp::train
