// What a weights file written by vkamp-train says about its model beyond
// the tensors, in its safetensors "__metadata__" (strings only, so lists
// and numbers are JSON text):
//   vkamp.model        the model string
//   vkamp.task         classify | regress
//   vkamp.classes      classify: a JSON list of the class names, in output order
//   vkamp.standardize  when trained with --standardize: {"mean": [...], "std": [...]}
//   vkamp.standardize_target  regress, when trained with --standardize-target:
//                      the targets' {"mean": [...], "std": [...]}; the model's
//                      outputs are in those units, and prediction undoes them
//   vkamp.features     CSV: a JSON list of the feature columns, in input order
//   vkamp.label        CSV, classify: the label column
//   vkamp.targets      CSV, regress: a JSON list of the target columns
//   vkamp.precision, vkamp.step, vkamp.loss_scale  (informational)
// vkamp-predict rebuilds the model and its input handling from these.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vkamp/data/standardize.hpp"
#include "vkamp/io/safetensors.hpp"

namespace vkamp::app {

struct SavedModel {
  std::string model;
  bool regress = false;
  std::vector<std::string> classes;
  std::optional<data::Standardizer> standardizer;
  std::vector<std::string> features;  // CSV column names (empty for arrays)
  std::string label;                  // CSV, classify
  std::vector<std::string> targets;   // CSV, regress
  std::optional<data::Standardizer> target_standardizer;  // regress: outputs = (target - mean) / std
};

// The keys above (not the informational ones).
std::map<std::string, std::string> metadata_of(const SavedModel& m);
// Reads them back; a missing or malformed key is an io::FormatError naming
// `path` and the key.
SavedModel read_saved_model(const io::TensorFile& file, const std::string& path);

}  // namespace vkamp::app
