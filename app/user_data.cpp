#include "app/user_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <sstream>

#include "vkamp/config_error.hpp"
#include "vkamp/data/class_ids.hpp"
#include "vkamp/data/data_error.hpp"

namespace vkamp::app {
namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// A seeded shuffle of the rows, then the last `fraction` of them held out.
void split_off(data::HostData& all, double fraction, uint64_t seed, data::HostData& held_out) {
  std::vector<uint32_t> order(all.count);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 gen(seed ^ 0x5eed5eed5eedull);
  std::shuffle(order.begin(), order.end(), gen);
  const uint32_t n_out = uint32_t(double(all.count) * fraction);
  if (n_out == 0 || n_out >= all.count)
    throw vkamp::ConfigError("--val-split " + std::to_string(fraction) + " of " + std::to_string(all.count) +
                             " rows leaves no rows on one side");
  const std::span<const uint32_t> ids(order);
  held_out = all.select(ids.subspan(all.count - n_out));
  all = all.select(ids.first(all.count - n_out));
}

void print_notes(const data::LabeledData& d) {
  for (const std::string& note : d.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
}

// Without --task, a label column of many distinct numbers is a regression
// target read as classes (one class per price, say): refuse it rather than
// train a classifier that cannot generalise.
void refuse_continuous_labels(const data::LabeledData& tr, const DataOptions& d) {
  const std::string why = data::continuous_label_reason(tr.classes, tr.data.labels);
  if (why.empty()) return;
  const std::string column = tr.target_names.empty() ? "" : tr.target_names[0];
  const std::string which = column.empty() ? "the labels (" + d.y_key + ")" : "the label column '" + column + "'";
  const std::string regress = "--task regress" + (d.label.empty() ? std::string() : " --target " + column);
  throw data::DataError(d.train_path + ": " + which + " looks like a regression's target, not classes: " + why +
                        ". Pass " + regress + " to fit it (with --standardize-target if its values are large), "
                        "or --task classify if these are classes");
}

// The largest finite magnitude of each column of a row-major table.
std::vector<double> column_peaks(const std::vector<float>& table, size_t width) {
  std::vector<double> peak(width, 0.0);
  for (size_t i = 0; width && i < table.size(); ++i)
    if (std::isfinite(table[i])) peak[i % width] = std::max(peak[i % width], double(std::fabs(table[i])));
  return peak;
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

data::LoadOptions load_options(const DataOptions& d) {
  data::LoadOptions o;
  o.task = d.regress ? data::Task::Regress : data::Task::Classify;
  o.label = d.label;
  o.targets = split_commas(d.targets);
  o.x_key = d.x_key;
  o.y_key = d.y_key;
  o.allow_nonfinite = d.allow_nonfinite;
  o.drop_unlabelled = d.drop_unlabelled;
  o.delimiter = d.delimiter;
  o.header = d.header;
  o.skip_rows = d.skip_rows;
  return o;
}

UserData load_user_data(const DataOptions& d, uint64_t seed) {
  if (d.train_path.empty()) throw vkamp::ConfigError("--train FILE is required (a .csv, .npz or IDX images file)");
  if (!d.test_path.empty() && d.val_split > 0)
    throw vkamp::ConfigError("--test and --val-split both choose the held-out rows: give one");
  if (!d.regress && !d.targets.empty()) throw vkamp::ConfigError("--target names regression targets: add --task regress");
  if (d.regress && !d.label.empty()) throw vkamp::ConfigError("--label names a class column: with --task regress use --target");
  if (!d.regress && d.standardize_target)
    throw vkamp::ConfigError("--standardize-target scales regression targets: add --task regress");
  data::LoadOptions opt = load_options(d);
  data::LabeledData tr = data::load_labeled(d.train_path, opt);
  print_notes(tr);
  if (tr.data.labels.empty() && tr.data.targets.empty())
    throw data::DataError(d.train_path + ": has no labels or targets to train on");
  if (!d.regress && !d.task_given) refuse_continuous_labels(tr, d);
  UserData u;
  u.example_shape = tr.example_shape;
  u.classes = tr.classes;
  u.outputs = tr.outputs;
  u.feature_names = tr.feature_names;
  u.target_names = tr.target_names;
  u.dropped_unlabelled = tr.dropped_unlabelled;
  u.train = std::move(tr.data);
  if (!d.test_path.empty()) {
    opt.classes = u.classes;  // the test labels are numbered as the training set's
    // A CSV's columns are found by the training set's names, so a header in
    // another order still lines up, and one misread (a --skip-rows that
    // does not fit the file) is an error rather than numbers as names.
    opt.features = u.feature_names;
    if (!u.target_names.empty()) {
      if (d.regress) opt.targets = u.target_names;
      else opt.label = u.target_names[0];
    }
    data::LabeledData te = data::load_labeled(d.test_path, opt);
    print_notes(te);
    if (te.data.features != u.train.features)
      throw data::DataError(d.test_path + ": has " + std::to_string(te.data.features) + " features per row, " +
                             d.train_path + " has " + std::to_string(u.train.features));
    if (te.outputs != u.outputs)
      throw data::DataError(d.test_path + ": has " + std::to_string(te.outputs) + " targets per row, " +
                             d.train_path + " has " + std::to_string(u.outputs));
    u.dropped_unlabelled += te.dropped_unlabelled;
    u.test = std::move(te.data);
  } else if (d.val_split > 0) {
    split_off(u.train, d.val_split, seed, u.test);
  }
  if (d.standardize) {
    u.standardizer = data::Standardizer::fit(u.train);
    u.standardizer->apply(u.train);
    if (u.test.count) u.standardizer->apply(u.test);
  }
  if (d.standardize_target) {
    u.target_standardizer = data::Standardizer::fit_targets(u.train);
    u.target_standardizer->apply_targets(u.train);
    if (u.test.count) u.target_standardizer->apply_targets(u.test);
  }
  return u;
}

void check_value_range(const UserData& u, const DataOptions& d, Format precision) {
  const double top = format_max(precision);
  const std::string fmt = format_name(precision);
  // bf16 and cb16 reach about as far as fp32; fp16 stops at 65504.
  const std::string wider = precision == Format::F16 ? "--precision bf16" : "--precision fp32";
  auto check = [&](const data::HostData& h, const std::string& file, bool targets) {
    const std::vector<float>& table = targets ? h.targets : h.x;
    const size_t width = targets ? (h.count ? table.size() / h.count : 0) : h.features;
    const std::vector<double> peak = column_peaks(table, width);
    std::vector<size_t> over;
    for (size_t c = 0; c < width; ++c)
      if (peak[c] > top) over.push_back(c);
    if (over.empty()) return;
    const size_t c = over[0];
    const std::vector<std::string>& names = targets ? u.target_names : u.feature_names;
    const std::string column = c < names.size()
                                   ? std::string(targets ? "target column '" : "column '") + names[c] + "'"
                                   : std::string(targets ? "target " : "feature ") + std::to_string(c);
    const bool scaled = targets ? u.target_standardizer.has_value() : u.standardizer.has_value();
    const std::string flag = targets ? "--standardize-target" : "--standardize";
    std::string msg = file + ": " + column + (scaled ? ", standardized," : "") + " reaches " +
                      number_text(peak[c]) + " in magnitude" +
                      (over.size() > 1 ? " (and " + std::to_string(over.size() - 1) + " more columns go past it)" : "") +
                      ", past the largest " + fmt + " value (" + number_text(top) +
                      "): it would overflow on the first step. ";
    msg += scaled ? "Train in " + wider
                  : "Pass " + flag + " (scales each column by the training rows' mean and std), or " + wider;
    throw data::DataError(msg);
  };
  const std::string& held_out_file = d.test_path.empty() ? d.train_path : d.test_path;
  check(u.train, d.train_path, false);
  if (u.test.count) check(u.test, held_out_file, false);
  if (d.regress) {
    check(u.train, d.train_path, true);
    if (u.test.count) check(u.test, held_out_file, true);
  }
}

std::string default_model(const UserData& data) {
  std::string input;
  for (size_t i = 0; i < data.example_shape.size(); ++i) input += (i ? "x" : "") + std::to_string(data.example_shape[i]);
  if (data.example_shape.size() == 3) input += "-f";
  return input + "-64r-64r-" + std::to_string(data.outputs);
}

}  // namespace vkamp::app
