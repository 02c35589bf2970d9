// Per-column standardisation, v' = (v - mean) / std, fitted on the training
// set and saved with the model so prediction inputs get the same transform:
// of the features (x), and of regression targets, whose scaling prediction
// undoes to report outputs in the targets' own units.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "vkamp/data/host_data.hpp"

namespace vkamp::data {

struct Standardizer {
  std::vector<float> mean, std;  // one per column

  // Mean and population standard deviation per column of a row-major
  // table of `columns` columns, summed in double. A constant column gets
  // std 1: it carries no information, and dividing by 0 would turn it into
  // NaNs; with std 1 it becomes a column of zeros.
  static Standardizer fit(std::span<const float> table, size_t columns);
  // The features: the columns of d.x.
  static Standardizer fit(const HostData& d);
  // The regression targets: the columns of d.targets.
  static Standardizer fit_targets(const HostData& d);
  // (v - mean) / std, and back (v * std + mean), over a row-major table of
  // mean.size() columns.
  void apply(std::span<float> table) const;
  void undo(std::span<float> table) const;
  // Throws DataError when d has another number of features (targets).
  void apply(HostData& d) const;
  void apply_targets(HostData& d) const;
  // {"mean": [...], "std": [...]}
  std::string to_json() const;
  // Throws DataError on anything but what to_json writes.
  static Standardizer from_json(const std::string& json);
};

}  // namespace vkamp::data
