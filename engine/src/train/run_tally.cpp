#include "vkamp/train/run_tally.hpp"

#include <algorithm>

namespace vkamp::train {

void RunTally::add(StepMetrics& m, const std::vector<DispatchTime>& timings) {
  for (auto& t : timings) {
    m.step_time_ms += t.ms;
    kernel_ms_sum_[t.label] += t.ms;
    if (t.label == "amp_check" || t.label == "step_control" || t.label == "inject_overflow") amp_ms_sum_ += t.ms;
  }
  if (m.step_time_ms > 0) {
    gpu_ms_sum_ += m.step_time_ms;
    ++timed_steps_;
  }
  summary_.steps++;
  summary_.applied = m.applied;
  summary_.skipped += m.skipped;
  summary_.overflows += m.overflow;
  summary_.last_loss = m.loss;
}

TrainSummary RunTally::summary(uint32_t samples_per_step) const {
  TrainSummary s = summary_;
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count() - s.eval_seconds;
  s.samples_per_second = s.seconds > 0 ? double(s.steps) * samples_per_step / s.seconds : 0;
  if (timed_steps_) {
    s.gpu_ms_per_step = gpu_ms_sum_ / timed_steps_;
    s.amp_ms_per_step = amp_ms_sum_ / timed_steps_;
    for (auto& [label, ms] : kernel_ms_sum_) s.kernel_ms_per_step.push_back({label, ms / timed_steps_});
    std::sort(s.kernel_ms_per_step.begin(), s.kernel_ms_per_step.end(),
              [](auto& a, auto& b) { return a.second > b.second; });
  }
  return s;
}

}  // namespace vkamp::train
