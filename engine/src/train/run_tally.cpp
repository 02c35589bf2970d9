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
    profile_.add(timings);
    gpu_ms_sum_ += m.step_time_ms;
    ++timed_steps_;
  }
  summary_.steps++;
  summary_.applied = m.applied;
  summary_.skipped += m.skipped;
  summary_.overflows += m.overflow;
  summary_.last_loss = m.loss;
  if (scope_.empty()) return;
  const UnderflowShares u = scope_.of_step(m);
  TrainSummary::Underflow& t = summary_.underflow;
  lost_unscaled_sum_ += u.lost_unscaled;
  zeros_sum_ += u.zeros;
  subnormal_sum_ += u.subnormal;
  t.lost_unscaled_last = u.lost_unscaled;
  // An overflowed step's largest finite gradient says nothing of the
  // headroom: the step had none.
  if (!m.overflow && u.headroom) t.min_headroom = std::min(t.min_headroom.value_or(*u.headroom), *u.headroom);
}

void RunTally::set_underflow_scope(UnderflowScope scope) {
  scope_ = std::move(scope);
  tensor_lost_unscaled_sum_.assign(scope_.tensors.size(), 0);
}

void RunTally::add(const TensorUnderflow& u) {
  if (u.stats.size() != tensor_lost_unscaled_sum_.size()) return;
  for (size_t i = 0; i < u.stats.size(); ++i)
    tensor_lost_unscaled_sum_[i] += scope_.of_tensor(i, u.stats[i]).lost_unscaled;
  ++tensor_steps_;
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
    s.class_ms_per_step = profile_.by_class();
    s.top_dispatches = profile_.top(10);
  }
  if (s.steps) {
    s.underflow.lost_unscaled_mean = lost_unscaled_sum_ / s.steps;
    s.underflow.zeros_mean = zeros_sum_ / s.steps;
    s.underflow.subnormal_mean = subnormal_sum_ / s.steps;
  }
  if (tensor_steps_) {
    const auto worst = std::max_element(tensor_lost_unscaled_sum_.begin(), tensor_lost_unscaled_sum_.end());
    if (*worst > 0) {
      s.underflow.worst_tensor = scope_.tensors[size_t(worst - tensor_lost_unscaled_sum_.begin())];
      s.underflow.worst_tensor_lost_unscaled = *worst / tensor_steps_;
    }
  }
  return s;
}

}  // namespace vkamp::train
