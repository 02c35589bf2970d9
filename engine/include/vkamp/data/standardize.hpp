// Per-feature standardisation, x' = (x - mean) / std, fitted on the training
// set and saved with the model so prediction inputs get the same transform.
#pragma once
#include <string>
#include <vector>

#include "vkamp/data/host_data.hpp"

namespace vkamp::data {

struct Standardizer {
  std::vector<float> mean, std;  // one per feature

  // Mean and population standard deviation per column, summed in double. A
  // constant column gets std 1: it carries no information, and dividing by
  // 0 would turn it into NaNs; with std 1 it becomes a column of zeros.
  static Standardizer fit(const HostData& d);
  // Throws DataError when d has another number of features.
  void apply(HostData& d) const;
  // {"mean": [...], "std": [...]}
  std::string to_json() const;
  // Throws DataError on anything but what to_json writes.
  static Standardizer from_json(const std::string& json);
};

}  // namespace vkamp::data
