#include "vkamp/data/labeled_arrays.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "finite_values.hpp"
#include "vkamp/data/class_ids.hpp"
#include "vkamp/data/data_error.hpp"

namespace vkamp::data {
namespace {

// Class names from y: an integer array's ids as text, or a text array's
// strings; "" where a text label is empty or only white space.
std::vector<std::string> label_names(const NpyArray& y, const std::string& y_label) {
  if (!y.is_integer() && !y.is_text())
    throw DataError(y_label + ": dtype '" + npy_descr(y) + "'; class ids must be integers ('|u1', '<i4' or " +
                    "'<i8'), or strings for class names ('<U6'), to classify (float targets are for regression)");
  if (y.shape.size() > 2 || (y.shape.size() == 2 && y.shape[1] != 1))
    throw DataError(y_label + ": shape " + shape_text(y.shape) + "; class labels are N or N x 1");
  if (y.is_text()) {
    std::vector<std::string> names = y.to_strings(y_label);
    for (std::string& n : names)
      if (is_blank_label(n)) n.clear();
    return names;
  }
  const std::vector<int64_t> ids = y.to_integers();
  std::vector<std::string> names;
  names.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0)
      throw DataError(y_label + ": index " + std::to_string(i) + ": class id " + std::to_string(ids[i]) +
                      " is negative");
    names.push_back(std::to_string(ids[i]));
  }
  return names;
}

// Keeps the rows of `out` whose label is not empty (opt.drop_unlabelled),
// or names the first empty one; returns each kept row's index in the file.
std::vector<size_t> drop_unlabelled(std::vector<std::string>& names, const std::string& y_label,
                                    const LoadOptions& opt, LabeledData& out) {
  std::vector<size_t> kept;
  kept.reserve(names.size());
  const size_t width = out.data.features;
  for (size_t r = 0; r < names.size(); ++r) {
    if (names[r].empty()) {
      if (!opt.drop_unlabelled)
        throw DataError(y_label + ": index " + std::to_string(r) + ": the label is empty; " + kUnlabelledAdvice);
      continue;
    }
    if (kept.size() != r) {
      names[kept.size()] = std::move(names[r]);
      std::copy_n(out.data.x.begin() + r * width, width, out.data.x.begin() + kept.size() * width);
    }
    kept.push_back(r);
  }
  out.dropped_unlabelled = names.size() - kept.size();
  if (kept.empty()) throw DataError(y_label + ": every label is empty; there are no rows to use");
  names.resize(kept.size());
  out.data.x.resize(kept.size() * width);
  out.data.count = static_cast<uint32_t>(kept.size());
  return kept;
}

void fill_class_ids(const NpyArray& y, const std::string& y_label, const LoadOptions& opt, LabeledData& out) {
  std::vector<std::string> names = label_names(y, y_label);
  const std::vector<size_t> rows = drop_unlabelled(names, y_label, opt, out);
  ClassIds numbered =
      number_classes(names, opt.classes, [&](size_t i) { return y_label + ": index " + std::to_string(rows[i]); });
  out.data.labels = std::move(numbered.ids);
  out.classes = std::move(numbered.classes);
  out.outputs = static_cast<uint32_t>(out.classes.size());
}

// The first value of `values` (read from `a`) that is not finite, as an
// error naming its index and, for a table, its row and column.
void refuse_nonfinite(const std::vector<float>& values, const NpyArray& a, uint64_t width, const std::string& label) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isfinite(values[i])) continue;
    const std::string place = width > 1 ? " (row " + std::to_string(i / width) + ", column " +
                                              std::to_string(i % width) + ")"
                                        : "";
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", a.at(i));
    throw DataError(label + ": index " + std::to_string(i) + place + ": " + text + " " + nonfinite_reason(a.at(i)) +
                    "; " + kNonfiniteAdvice);
  }
}

void fill_targets(const NpyArray& y, const std::string& y_label, const LoadOptions& opt, LabeledData& out) {
  if (y.is_text())
    throw DataError(y_label + ": dtype '" + npy_descr(y) + "'; regression targets are numbers");
  const bool usable = y.shape.size() == 1 || (y.shape.size() == 2 && y.shape[1] >= 1 && y.shape[1] <= UINT32_MAX);
  if (!usable)
    throw DataError(y_label + ": shape " + shape_text(y.shape) + "; regression targets are N or N x K");
  out.data.targets = y.to_floats();
  out.outputs = y.shape.size() == 1 ? 1 : static_cast<uint32_t>(y.shape[1]);
  if (!opt.allow_nonfinite) refuse_nonfinite(out.data.targets, y, out.outputs, y_label);
}

}  // namespace

LabeledData labeled_from_arrays(const NpyArray& x, const NpyArray* y, const std::string& x_label,
                                const std::string& y_label, const LoadOptions& opt) {
  if (x.shape.size() != 2 && x.shape.size() != 4)
    throw DataError(x_label + ": shape " + shape_text(x.shape) +
                    "; x must be N x F (a table) or N x H x W x C (images)");
  const uint64_t count = x.shape[0];
  if (count == 0) throw DataError(x_label + ": shape " + shape_text(x.shape) + " holds no examples");
  if (count > UINT32_MAX) throw DataError(x_label + ": more examples than vkamp takes (2^32 - 1)");
  const uint64_t features = x.elements() / count;
  if (features == 0 || features > UINT32_MAX)
    throw DataError(x_label + ": shape " + shape_text(x.shape) + " gives " + std::to_string(features) +
                    " features per example; 1 to 2^32 - 1 are usable");

  if (x.is_text())
    throw DataError(x_label + ": dtype '" + npy_descr(x) + "'; the inputs must be numbers (text is for class labels)");

  LabeledData out;
  out.data.count = static_cast<uint32_t>(count);
  out.data.features = static_cast<uint32_t>(features);
  out.data.x = x.to_floats();
  // Only a table's columns are features a user can name; an image is its pixels.
  if (!opt.allow_nonfinite) refuse_nonfinite(out.data.x, x, x.shape.size() == 2 ? features : 1, x_label);
  if (x.dtype == NpyType::U8)  // bytes are pixels, scaled to [0, 1] as IDX images are
    for (float& v : out.data.x) v /= 255.f;
  if (x.shape.size() == 2)
    out.example_shape = {out.data.features};
  else
    out.example_shape = {uint32_t(x.shape[1]), uint32_t(x.shape[2]), uint32_t(x.shape[3])};
  if (!y) return out;

  if (y->shape.empty() || y->shape[0] != count)
    throw DataError(x_label + " holds " + std::to_string(count) + " examples but " + y_label + " has shape " +
                    shape_text(y->shape) + "; the first dimension must match");
  if (opt.task == Task::Classify)
    fill_class_ids(*y, y_label, opt, out);
  else
    fill_targets(*y, y_label, opt, out);
  return out;
}

}  // namespace vkamp::data
