// --metrics FILE: one JSON object per line. Step records carry exactly the
// keys step, loss, loss_scale, skipped, overflow, grad_norm, lr, retries,
// step_time (ms); histograms are records with "type": "histogram", and
// held-out evaluations at epoch ends records with "type": "eval".
#pragma once
#include <cstdio>
#include <string>

#include "vkamp/train/trainer.hpp"

namespace vkamp::train {

class MetricsLog {
 public:
  // Throws vkamp::Error when the file cannot be opened.
  explicit MetricsLog(const std::string& path);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  void write(const StepMetrics& m);
  void write(const TensorHistogram& h);
  // {"type": "eval", "epoch": E, "step": S, "accuracy" or "mse": V}; nothing
  // for an epoch end without an evaluation.
  void write(const EpochEnd& e);

 private:
  std::FILE* f_ = nullptr;
  std::string path_;
};

// JSON number: finite values as shortest round-trip text, inf/NaN as strings
// ("inf", "-inf", "nan"), which JSON cannot hold as numbers.
std::string json_number(double v);

}  // namespace vkamp::train
