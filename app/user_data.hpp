// The data of a vkamp-train job, read from the user's files: the training
// set, the held-out set (--test, or --val-split of --train), the classes,
// and the standardizations fitted on the training rows; and the checks
// that stop a run whose data cannot train before it starts (labels that
// look like a regression's targets, values past the precision's range).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/run_options.hpp"
#include "vkamp/data/labeled_data.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/data/standardize.hpp"
#include "vkamp/data/host_data.hpp"

namespace vkamp::app {

struct UserData {
  data::HostData train, test;           // test.count == 0: nothing held out
  std::vector<uint32_t> example_shape;   // {features} or {H, W, C}
  std::vector<std::string> classes;      // classify: names in id order
  uint32_t outputs = 0;                  // classes, or target columns
  std::optional<data::Standardizer> standardizer;
  std::optional<data::Standardizer> target_standardizer;  // --standardize-target
  std::vector<std::string> feature_names, target_names;  // CSV columns (empty for arrays)
  uint64_t dropped_unlabelled = 0;       // rows --drop-unlabelled left out (train and test)
};

// The reader options for `d` (task, label, targets, npz keys).
data::LoadOptions load_options(const DataOptions& d);

// Reads --train (and --test), splits off --val-split with a seeded shuffle,
// and standardizes when asked; the readers' notes go to stderr. Without
// --task, labels that look continuous (data::continuous_label_reason) are
// refused with the advice to pass --task regress. Throws data::DataError
// (bad files) or vkamp::ConfigError (bad combinations of settings).
UserData load_user_data(const DataOptions& d, uint64_t seed);

// Every feature (and regression target) the model reads is stored in
// `precision`: a column whose largest magnitude (after standardization) is
// past that format's largest value would overflow on the first step. Throws
// data::DataError naming the file and column, and what to pass instead.
void check_value_range(const UserData& data, const DataOptions& d, Format precision);

// The model string for `data` when --model is not given: two hidden layers
// of 64 with ReLU (a conv-free default that trains on any table).
std::string default_model(const UserData& data);

}  // namespace vkamp::app
