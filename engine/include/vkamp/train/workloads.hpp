// The training jobs vkamp ships, by name: model, loss, data and the
// defaults they train well with. The samples and the app's "sample" picker
// read them from here, so a job is defined once.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "vkamp/train/config.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::train {

struct Datasets {
  HostData train, test;  // test.count == 0: evaluate on nothing
};

struct Workload {
  std::string name;   // "fashion_mlp"
  std::string about;  // one line
  std::string model;  // parse_model() spec
  LossKind loss = LossKind::SoftmaxXent;
  TrainConfig defaults;
  // Loads the data for a config (cfg.data_dir, cfg.seed). Throws DataError.
  std::function<Datasets(const TrainConfig&)> load;
};

const std::vector<Workload>& workloads();
// Throws ConfigError naming the known workloads when `name` is not one.
const Workload& find_workload(const std::string& name);

}  // namespace vkamp::train
