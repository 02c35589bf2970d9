// The training jobs vkamp ships, by name: model, loss, data and the
// defaults they train well with. The samples and the app's "sample" picker
// read them from here, so a job is defined once.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "app/run_options.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::app {

struct Datasets {
  train::HostData train, test;  // test.count == 0: evaluate on nothing
  std::string model;            // set when the job's model depends on the data (vkamp-train's default)
};

struct Workload {
  std::string name;   // "fashion_mlp"
  std::string about;  // one line
  std::string model;  // parse_model() spec
  train::LossKind loss = train::LossKind::SoftmaxXent;
  RunOptions defaults;
  // Loads the data for a run (its data_dir, seed). Throws train::DataError.
  std::function<Datasets(const RunOptions&)> load;
};

const std::vector<Workload>& workloads();

// The settings vkamp-train starts from: they train tabular data well out of the box.
RunOptions user_data_defaults();
// The job of vkamp-train (and vkamp-studio --train) over opts.data: the
// user's files and model (the model sized to the data when none is given).
Workload user_data_workload(const RunOptions& opts);
// Throws train::ConfigError naming the known workloads when `name` is not one.
const Workload& find_workload(const std::string& name);

}  // namespace vkamp::app
