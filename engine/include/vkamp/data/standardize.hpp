// Per-feature standardisation, x' = (x - mean) / std, fitted on the training
// set and saved with the model so prediction inputs get the same transform.
#pragma once
#include <string>
#include <vector>

#include "vkamp/train/host_data.hpp"

namespace vkamp::data {

struct Standardizer {
  std::vector<float> mean, std;  // one per feature

  // Mean and population standard deviation per column, summed in double. A
  // constant column gets std 1: it carries no information, and dividing by
  // 0 would turn it into NaNs; with std 1 it becomes a column of zeros.
  static Standardizer fit(const train::HostData& d);
  // Throws train::DataError when d has another number of features.
  void apply(train::HostData& d) const;
  // {"mean": [...], "std": [...]}
  std::string to_json() const;
  // Throws train::DataError on anything but what to_json writes.
  static Standardizer from_json(const std::string& json);
};

}  // namespace vkamp::data
