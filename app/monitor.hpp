// What --early-stop and --save-best watch (--early-stop-monitor, Keras's
// EarlyStopping `monitor`): the value an evaluation gives it, whether a new
// value improves on the best by more than --early-stop-min-delta, and how
// the lines print it.
#pragma once
#include <string>

#include "app/run_options.hpp"
#include "vkamp/config/setting.hpp"
#include "vkamp/train/step_metrics.hpp"

namespace vkamp::app {

// val_loss | val_accuracy | val_mse (Keras's and Lightning's names).
const config::EnumNames<Monitor>& monitor_names();
const char* monitor_name(Monitor m);

// The mode the metric implies: higher accuracy, lower loss and MSE.
bool maximizes(Monitor m);

// Throws ConfigError when a run whose held-out metric is `metric`
// ("accuracy", "mse", a language model's "loss"; Trainer::held_out_metric)
// has no such value: val_accuracy needs a classifier, val_mse a regression.
void check_monitor(Monitor m, const std::string& metric);

// The monitored value of an evaluation: its held-out loss (EpochEnd::loss,
// the cross-entropy or the MSE), accuracy or MSE. Throws ConfigError as
// check_monitor.
double monitored_value(Monitor m, const train::EpochEnd& e);

// Whether `value` beats `best` by more than `min_delta` in the monitor's
// mode (a tie, or a gain of min_delta or less, is no improvement).
bool improves(Monitor m, double value, double best, double min_delta);

// "val_loss 0.4123", "val_accuracy 93.40%", "val_mse 0.0123".
std::string monitor_text(Monitor m, double value);

}  // namespace vkamp::app
