// Synthetic datasets, deterministic per seed (tests and samples).
#include "vkamp/data/dataset.hpp"

#include <random>

namespace vkamp::data {

// Draw order, fixed so a seed always gives the same set: w_true[0..features),
// b_true, then per example its features x[i][0..features) and one noise draw
// (taken even when noise = 0, so x does not depend on the noise level). y is
// summed in double, in feature order, then rounded to float once.
RegressionData make_regression(uint32_t count, uint32_t features, uint64_t seed, float noise) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);

  RegressionData d;
  d.count = count;
  d.features = features;
  d.w_true.resize(features);
  for (auto& w : d.w_true) w = static_cast<float>(normal(rng));
  d.b_true = static_cast<float>(unit(rng));
  d.x.resize(size_t{count} * features);
  d.y.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    float* row = d.x.data() + size_t{i} * features;
    double sum = 0.0;
    for (uint32_t j = 0; j < features; ++j) {
      row[j] = static_cast<float>(unit(rng));
      sum += double{row[j]} * double{d.w_true[j]};
    }
    sum += d.b_true;
    sum += double{noise} * normal(rng);
    d.y[i] = static_cast<float>(sum);
  }
  return d;
}

ClassificationData make_classification(uint32_t count, uint32_t features, uint32_t classes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> proj(size_t{features} * classes);
  for (auto& p : proj) p = normal(rng);
  ClassificationData d;
  d.count = count;
  d.features = features;
  d.classes = classes;
  d.x.resize(size_t{count} * features);
  d.y.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    float* row = d.x.data() + size_t{i} * features;
    for (uint32_t j = 0; j < features; ++j) row[j] = static_cast<float>(normal(rng));
    double best = -1e300;
    for (uint32_t c = 0; c < classes; ++c) {
      double s = 0;
      for (uint32_t j = 0; j < features; ++j) s += double{row[j]} * proj[size_t{c} * features + j];
      if (s > best) best = s, d.y[i] = c;
    }
  }
  return d;
}

}  // namespace vkamp::data
