#include "app/monitor.hpp"

#include <cstdio>

#include "vkamp/config_error.hpp"

namespace vkamp::app {

const config::EnumNames<Monitor>& monitor_names() {
  static const config::EnumNames<Monitor> names = {
      {"val_loss", Monitor::ValLoss}, {"val_accuracy", Monitor::ValAccuracy}, {"val_mse", Monitor::ValMse}};
  return names;
}

const char* monitor_name(Monitor m) { return config::name_of(monitor_names(), m); }

bool maximizes(Monitor m) { return m == Monitor::ValAccuracy; }

void check_monitor(Monitor m, const std::string& metric) {
  if (m == Monitor::ValAccuracy && metric != "accuracy")
    throw vkamp::ConfigError(std::string("--early-stop-monitor val_accuracy watches a classifier's held-out accuracy; "
                                         "this run's held-out metric is ") +
                             (metric == "mse" ? "the mean squared error (use val_mse or val_loss)"
                                              : "the loss (use val_loss)"));
  if (m == Monitor::ValMse && metric != "mse")
    throw vkamp::ConfigError("--early-stop-monitor val_mse watches a regression's held-out mean squared error; this "
                             "run's held-out metric is " +
                             std::string(metric == "accuracy" ? "accuracy (use val_accuracy or val_loss)"
                                                              : "the loss (use val_loss)"));
}

double monitored_value(Monitor m, const train::EpochEnd& e) {
  check_monitor(m, e.metric);
  return m == Monitor::ValLoss ? e.loss : e.value;
}

bool improves(Monitor m, double value, double best, double min_delta) {
  return maximizes(m) ? value > best + min_delta : value < best - min_delta;
}

std::string monitor_text(Monitor m, double value) {
  char buf[64];
  if (m == Monitor::ValAccuracy) std::snprintf(buf, sizeof buf, "%s %.2f%%", monitor_name(m), 100 * value);
  else if (m == Monitor::ValLoss) std::snprintf(buf, sizeof buf, "%s %.4f", monitor_name(m), value);
  else std::snprintf(buf, sizeof buf, "%s %.6g", monitor_name(m), value);
  return buf;
}

}  // namespace vkamp::app
