// User data as the trainer takes it: examples, their labels (classification)
// or targets (regression), and the names that go with them. load_labeled
// picks the reader by the file name; every reader treats the file as
// untrusted, and every error is a DataError naming the file and the
// line (text) or byte offset (binary) and what was expected. A feature or
// target that is not finite (NaN, an infinity, or a number past float32's
// range such as 1e400) is such an error too, unless allow_nonfinite: one
// bad cell would otherwise surface much later as a loss-scale overflow.
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
  // Let NaN and infinities (and numbers past float32's range, read as
  // infinities) through as values, for those who mean them.
  bool allow_nonfinite = false;
  // CSV as exported: the field delimiter (',' or any one other character
  // but a quote or a line end), whether the first row is a header (without
  // one the columns are named c0, c1, ...), and the lines before the header
  // (or first row) to skip, such as scikit-learn's count line. Line numbers
  // in errors count the skipped lines.
  char delimiter = ',';
  bool header = true;
  uint32_t skip_rows = 0;
  // A row whose label (or a target) cell is empty or only white space, or
  // whose text label in an array is, is an error naming the file, the line
  // (or index) and the column; with this, such rows are left out and
  // counted in LabeledData::dropped_unlabelled.
  bool drop_unlabelled = false;
};

struct LabeledData {
  HostData data;              // x (count x features, float), labels (Classify) or targets (Regress)
  std::vector<uint32_t> example_shape;  // {features} for tables; {H, W, C} for N x H x W x C images
  std::vector<std::string> classes;  // Classify: class names in id order (see class_ids.hpp)
  uint32_t outputs = 0;              // Classify: classes.size(); Regress: target columns
  std::vector<std::string> feature_names;  // CSV header names of the x columns; empty otherwise
  std::vector<std::string> target_names;   // CSV header names of the label or target columns
  // What the reader changed that the user should hear about, one line each
  // naming the file (float64 arrays read as float32); the tools print them.
  std::vector<std::string> notes;
  uint64_t dropped_unlabelled = 0;  // rows left out by LoadOptions::drop_unlabelled
};

// By extension: .csv or .csv.gz (csv.hpp); .npy (x only: no labels, data.labels and
// data.targets empty; for prediction inputs); .npz (npz.hpp); an IDX images
// file (...-images-idx3-ubyte[.gz]) with its labels file found by replacing
// "images-idx3" with "labels-idx1". Images given as uint8 (IDX, and uint8
// .npy/.npz x) are divided by 255 into [0, 1]; float64 arrays are read as
// float32, with a note. A .txt file is not labeled data but a token source
// (text.hpp).
LabeledData load_labeled(const std::string& path, const LoadOptions& opt);

}  // namespace vkamp::data
