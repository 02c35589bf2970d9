#include "app/epoch_watch.hpp"

#include <cstdio>
#include <utility>

namespace vkamp::app {

std::string held_out_text(const std::string& metric, double value) {
  char buf[64];
  if (metric == "accuracy") std::snprintf(buf, sizeof buf, "val accuracy %.2f%%", 100 * value);
  else if (metric == "loss") std::snprintf(buf, sizeof buf, "val loss %.4f", value);
  else std::snprintf(buf, sizeof buf, "val %s %.6g", metric.c_str(), value);
  return buf;
}

EpochWatch::EpochWatch(uint32_t epochs, bool by_step, StopRule rule, std::string sampled)
    : epochs_(epochs), by_step_(by_step), rule_(rule), sampled_(std::move(sampled)) {}

void EpochWatch::add(const train::StepMetrics& m) {
  scale_ = m.loss_scale;
  if (m.skipped) {
    ++skipped_;
    return;
  }
  loss_sum_ += m.loss;
  ++applied_;
}

std::string EpochWatch::where(const train::EpochEnd& e) const {
  return by_step_ ? "step " + std::to_string(e.applied) : "epoch " + std::to_string(e.epoch);
}

EpochWatch::Verdict EpochWatch::end(const train::EpochEnd& e) {
  Verdict v;
  char buf[256];
  if (by_step_) std::snprintf(buf, sizeof buf, "step %5u", e.applied);
  else {
    const int width = int(std::to_string(epochs_).size());
    std::snprintf(buf, sizeof buf, "epoch %*u/%u", width, e.epoch, epochs_);
  }
  v.line = buf;
  // The mean of the applied steps' losses since the last line (the skipped
  // ones' losses were computed at a scale that overflowed).
  if (applied_) std::snprintf(buf, sizeof buf, "  train loss %.4f", loss_sum_ / applied_);
  else std::snprintf(buf, sizeof buf, "  train loss -");
  v.line += buf;
  if (!e.metric.empty()) {
    // A classifier's held-out loss comes from the same pass as its accuracy.
    if (e.metric == "accuracy") {
      std::snprintf(buf, sizeof buf, "  val loss %.4f", e.loss);
      v.line += buf;
    }
    v.line += "  " + held_out_text(e.metric, e.value) + sampled_;
    // As Keras's EarlyStopping: the best moves only on an improvement by
    // more than min_delta, so slow creeping gains still run out of patience.
    const double value = monitored_value(rule_.monitor, e);
    v.improved = !best_ || improves(rule_.monitor, value, best_value_, rule_.min_delta);
    if (v.improved) {
      best_ = e;
      best_value_ = value;
      since_best_ = 0;
    } else {
      ++since_best_;
    }
    v.stop = rule_.patience && since_best_ >= rule_.patience;
  }
  std::snprintf(buf, sizeof buf, "  skipped %u  scale %g", skipped_, double(scale_));
  v.line += buf;
  loss_sum_ = 0;
  applied_ = skipped_ = 0;
  return v;
}

}  // namespace vkamp::app
