// User data as the trainer takes it: examples, their labels (classification)
// or targets (regression), and the names that go with them. load_labeled
// picks the reader by the file name; every reader treats the file as
// untrusted, and every error is a DataError naming the file and the
// line (text) or byte offset (binary) and what was expected.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vkamp/data/host_data.hpp"

namespace vkamp::data {

enum class Task { Classify, Regress };

struct LoadOptions {
  Task task = Task::Classify;
  std::string label;                 // CSV: label column (classify) ; empty = last column
  std::vector<std::string> targets;  // CSV regress: target columns; empty = the last column
  std::string x_key = "x", y_key = "y";  // .npz array names
  // Classify: the class names to number labels by (from the training set or
  // a saved model). Empty = derive them from this file. A label not in a
  // given list is a DataError naming it and the line/index.
  std::vector<std::string> classes;
  // CSV: exactly these columns are the features, in this order (a saved
  // model's, for prediction); empty = every column but the label or targets.
  std::vector<std::string> features;
  // Prediction inputs may come without labels: a CSV whose header lacks the
  // named label (or target) columns, or an .npz without y, loads with
  // data.labels and data.targets empty instead of failing.
  bool label_optional = false;
};

struct LabeledData {
  HostData data;              // x (count x features, float), labels (Classify) or targets (Regress)
  std::vector<uint32_t> example_shape;  // {features} for tables; {H, W, C} for N x H x W x C images
  std::vector<std::string> classes;  // Classify: class names in id order (see class_ids.hpp)
  uint32_t outputs = 0;              // Classify: classes.size(); Regress: target columns
  std::vector<std::string> feature_names;  // CSV header names of the x columns; empty otherwise
  std::vector<std::string> target_names;   // CSV header names of the label or target columns
};

// By extension: .csv (csv.hpp); .npy (x only: no labels, data.labels and
// data.targets empty; for prediction inputs); .npz (npz.hpp); an IDX images
// file (...-images-idx3-ubyte[.gz]) with its labels file found by replacing
// "images-idx3" with "labels-idx1". Images given as uint8 (IDX, and uint8
// .npy/.npz x) are divided by 255 into [0, 1]. A .txt file is not labeled
// data but a token source (text.hpp).
LabeledData load_labeled(const std::string& path, const LoadOptions& opt);

}  // namespace vkamp::data
