#include "app/user_data.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <sstream>

#include "vkamp/config_error.hpp"
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

}  // namespace

data::LoadOptions load_options(const DataOptions& d) {
  data::LoadOptions o;
  o.task = d.regress ? data::Task::Regress : data::Task::Classify;
  o.label = d.label;
  o.targets = split_commas(d.targets);
  o.x_key = d.x_key;
  o.y_key = d.y_key;
  return o;
}

UserData load_user_data(const DataOptions& d, uint64_t seed) {
  if (d.train_path.empty()) throw vkamp::ConfigError("--train FILE is required (a .csv, .npz or IDX images file)");
  if (!d.test_path.empty() && d.val_split > 0)
    throw vkamp::ConfigError("--test and --val-split both choose the held-out rows: give one");
  if (!d.regress && !d.targets.empty()) throw vkamp::ConfigError("--target names regression targets: add --task regress");
  if (d.regress && !d.label.empty()) throw vkamp::ConfigError("--label names a class column: with --task regress use --target");
  data::LoadOptions opt = load_options(d);
  data::LabeledData tr = data::load_labeled(d.train_path, opt);
  if (tr.data.labels.empty() && tr.data.targets.empty())
    throw data::DataError(d.train_path + ": has no labels or targets to train on");
  UserData u;
  u.example_shape = tr.example_shape;
  u.classes = tr.classes;
  u.outputs = tr.outputs;
  u.feature_names = tr.feature_names;
  u.target_names = tr.target_names;
  u.train = std::move(tr.data);
  if (!d.test_path.empty()) {
    opt.classes = u.classes;  // the test labels are numbered as the training set's
    data::LabeledData te = data::load_labeled(d.test_path, opt);
    if (te.data.features != u.train.features)
      throw data::DataError(d.test_path + ": has " + std::to_string(te.data.features) + " features per row, " +
                             d.train_path + " has " + std::to_string(u.train.features));
    if (te.outputs != u.outputs)
      throw data::DataError(d.test_path + ": has " + std::to_string(te.outputs) + " targets per row, " +
                             d.train_path + " has " + std::to_string(u.outputs));
    u.test = std::move(te.data);
  } else if (d.val_split > 0) {
    split_off(u.train, d.val_split, seed, u.test);
  }
  if (d.standardize) {
    u.standardizer = data::Standardizer::fit(u.train);
    u.standardizer->apply(u.train);
    if (u.test.count) u.standardizer->apply(u.test);
  }
  return u;
}

std::string default_model(const UserData& data) {
  std::string input;
  for (size_t i = 0; i < data.example_shape.size(); ++i) input += (i ? "x" : "") + std::to_string(data.example_shape[i]);
  if (data.example_shape.size() == 3) input += "-f";
  return input + "-64r-64r-" + std::to_string(data.outputs);
}

}  // namespace vkamp::app
