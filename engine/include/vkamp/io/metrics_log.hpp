// --metrics FILE: one JSON object per line (written with nlohmann-json, so
// strings such as tensor names are escaped). Step records carry exactly the
// keys step, loss, loss_scale, skipped, overflow, grad_norm, lr, retries,
// step_time (ms), then the underflow accounting over every gradient
// element: zeros, subnormal, lost_unscaled as fractions in [0, 1] of the
// elements, and headroom in doublings (an integer), in that order;
// histograms are records with "type": "histogram", the per-tensor
// underflow accounting records with "type": "underflow" (the same
// fractions of the tensor's elements, nonfinite, and its headroom), and
// held-out evaluations at epoch ends records with "type": "eval". A number
// that was inf or NaN is written as null (JSON has neither): e.g. the loss
// or grad_norm of an overflowed step; so is a headroom when no gradient was
// nonzero and finite, and the fractions when the log has no UnderflowScope.
#pragma once
#include <cstdio>
#include <string>

#include "vkamp/train/trainer.hpp"
#include "vkamp/train/underflow_scope.hpp"

namespace vkamp::io {

class MetricsLog {
 public:
  // Throws vkamp::Error when the file cannot be opened. `scope` (the run's
  // format and tensors) turns the underflow counts into fractions.
  explicit MetricsLog(const std::string& path, train::UnderflowScope scope = {});
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  void write(const train::StepMetrics& m);
  void write(const train::TensorHistogram& h);
  // One {"type": "underflow", "step", "tensor", "loss_scale", "zeros",
  // "subnormal", "lost_unscaled", "nonfinite", "headroom"} per tensor; the
  // caller picks the steps (train::per_tensor_step). Nothing without a
  // scope that matches the record's tensors.
  void write(const train::TensorUnderflow& u);
  // {"type": "eval", "epoch": E, "step": S, "accuracy" or "mse": V}; nothing
  // for an epoch end without an evaluation.
  void write(const train::EpochEnd& e);

 private:
  void put(const std::string& line);

  std::FILE* f_ = nullptr;
  std::string path_;
  train::UnderflowScope scope_;
};

// JSON number: finite values as shortest round-trip text, inf and NaN as
// null (JSON cannot hold them as numbers).
std::string json_number(double v);

}  // namespace vkamp::io
