// What one run of a sample or of vkamp-studio is told: the training
// settings, plus where its files go and which GPU it uses. The trainer
// takes the TrainConfig part; the application handles the rest (opens the
// device, loads the data, writes metrics, reports and weights).
#pragma once
#include <string>
#include <vector>

#include "vkamp/train/config.hpp"
#include "vkamp/train/setting.hpp"

namespace vkamp::app {

// Extends TrainConfig, so that code which trains reads the same fields
// either way and the training rows apply to it unchanged.
struct RunOptions : train::TrainConfig {
  std::string device;               // index or name substring; empty = default
  std::string data_dir;             // empty = the sample's default
  std::string metrics_path;         // JSON Lines, one record per step
  std::string report_path;          // PNG of the dashboard at the end of the run
  bool progress = true;             // progress bar on stderr
  std::string save_path;            // safetensors file of the weights at the end; empty = none
  std::string init_from;            // safetensors file the weights start from; empty = seeded init
  Format save_dtype = Format::F32;  // F32, F16 or BF16 (PyTorch has no cb16)
};

// Every setting of a run, the training ones and the application's, in
// --help order (run_settings.cpp).
const std::vector<train::Setting<RunOptions>>& run_settings();
// Every key of run_settings(), aliases included.
const std::vector<std::string>& run_setting_keys();

// As the train:: functions of the same names, over every setting of a run.
void apply_setting(const std::string& key, const std::string& value, RunOptions& opts, const std::string& label);
void apply_setting(const std::string& key, const std::string& value, RunOptions& opts);
void apply_config_file(const std::string& path, RunOptions& opts);
void validate(const RunOptions& opts);

}  // namespace vkamp::app
