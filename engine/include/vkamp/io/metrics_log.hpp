// --metrics FILE: one JSON object per line (written with nlohmann-json, so
// strings such as tensor names are escaped). Step records carry exactly the
// keys step, loss, loss_scale, skipped, overflow, grad_norm, lr, retries,
// step_time (ms), in that order; histograms are records with "type":
// "histogram", and held-out evaluations at epoch ends records with "type":
// "eval". A number that was inf or NaN is written as null (JSON has neither):
// e.g. the loss or grad_norm of an overflowed step.
#pragma once
#include <cstdio>
#include <string>

#include "vkamp/train/trainer.hpp"

namespace vkamp::io {

class MetricsLog {
 public:
  // Throws vkamp::Error when the file cannot be opened.
  explicit MetricsLog(const std::string& path);
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  void write(const train::StepMetrics& m);
  void write(const train::TensorHistogram& h);
  // {"type": "eval", "epoch": E, "step": S, "accuracy" or "mse": V}; nothing
  // for an epoch end without an evaluation.
  void write(const train::EpochEnd& e);

 private:
  void put(const std::string& line);

  std::FILE* f_ = nullptr;
  std::string path_;
};

// JSON number: finite values as shortest round-trip text, inf and NaN as
// null (JSON cannot hold them as numbers).
std::string json_number(double v);

}  // namespace vkamp::io
