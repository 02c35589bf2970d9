#include "vkamp/train/metrics_log.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

#include "vkamp/error.hpp"

namespace vkamp::train {

std::string json_number(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

MetricsLog::MetricsLog(const std::string& path) : path_(path) {
  f_ = std::fopen(path.c_str(), "w");
  if (!f_) throw Error("cannot write metrics to " + path + ": " + std::strerror(errno));
}

MetricsLog::~MetricsLog() {
  if (f_) std::fclose(f_);
}

void MetricsLog::write(const StepMetrics& m) {
  std::fprintf(f_,
               "{\"step\": %u, \"loss\": %s, \"loss_scale\": %s, \"skipped\": %s, \"overflow\": %s, "
               "\"grad_norm\": %s, \"lr\": %s, \"retries\": %u, \"step_time\": %s}\n",
               m.step, json_number(m.loss).c_str(), json_number(m.loss_scale).c_str(),
               m.skipped ? "true" : "false", m.overflow ? "true" : "false", json_number(m.grad_norm).c_str(),
               json_number(m.lr).c_str(), m.retries, json_number(m.step_time_ms).c_str());
}

void MetricsLog::write(const TensorHistogram& h) {
  std::string bins;
  for (int i = 0; i < kHistLogBins; ++i) bins += (i ? "," : "") + std::to_string(h.bins[i]);
  std::fprintf(f_,
               "{\"type\": \"histogram\", \"step\": %u, \"tensor\": \"%s\", \"loss_scale\": %s, "
               "\"min_exp\": %d, \"log2_bins\": [%s], \"zero\": %u, \"inf\": %u, \"nan\": %u}\n",
               h.step, h.tensor.c_str(), json_number(h.loss_scale).c_str(), kHistMinExp, bins.c_str(),
               h.bins[kHistZero], h.bins[kHistInf], h.bins[kHistNan]);
}

void MetricsLog::write(const EpochEnd& e) {
  if (e.metric.empty()) return;
  std::fprintf(f_, "{\"type\": \"eval\", \"epoch\": %u, \"step\": %u, \"%s\": %s}\n", e.epoch, e.step,
               e.metric.c_str(), json_number(e.value).c_str());
}

}  // namespace vkamp::train
