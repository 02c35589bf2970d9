// The data of a vkamp-train job, read from the user's files: the training
// set, the held-out set (--test, or --val-split of --train), the classes,
// and the standardization fitted on the training rows.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/run_options.hpp"
#include "vkamp/data/labeled_data.hpp"
#include "vkamp/data/standardize.hpp"
#include "vkamp/data/host_data.hpp"

namespace vkamp::app {

struct UserData {
  data::HostData train, test;           // test.count == 0: nothing held out
  std::vector<uint32_t> example_shape;   // {features} or {H, W, C}
  std::vector<std::string> classes;      // classify: names in id order
  uint32_t outputs = 0;                  // classes, or target columns
  std::optional<data::Standardizer> standardizer;
  std::vector<std::string> feature_names, target_names;  // CSV columns (empty for arrays)
};

// The reader options for `d` (task, label, targets, npz keys).
data::LoadOptions load_options(const DataOptions& d);

// Reads --train (and --test), splits off --val-split with a seeded shuffle,
// and standardizes when asked. Throws data::DataError (bad files) or
// vkamp::ConfigError (bad combinations of settings).
UserData load_user_data(const DataOptions& d, uint64_t seed);

// The model string for `data` when --model is not given: two hidden layers
// of 64 with ReLU (a conv-free default that trains on any table).
std::string default_model(const UserData& data);

}  // namespace vkamp::app
