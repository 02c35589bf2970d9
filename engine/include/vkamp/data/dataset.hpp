// In-memory datasets before they become the trainer's HostData: a
// classification set, and synthetic sets drawn from a seed (tests, samples).
#pragma once
#include <cstdint>
#include <vector>

namespace vkamp::data {

// A classification set: `count` examples of `features` values and a label each.
struct ClassificationData {
  uint32_t count = 0, features = 0, classes = 0;
  std::vector<float> x;        // count * features
  std::vector<uint32_t> y;     // count
};

// y = x . w_true + b_true (+ noise), x ~ U(-1, 1), from a seed.
struct RegressionData {
  uint32_t count = 0, features = 0;
  std::vector<float> x, y, w_true;
  float b_true = 0;
};
RegressionData make_regression(uint32_t count, uint32_t features, uint64_t seed, float noise = 0.0f);

// A learnable classification problem: x ~ N(0, 1), label = arg-max of a
// fixed random linear map of x. Deterministic per seed.
ClassificationData make_classification(uint32_t count, uint32_t features, uint32_t classes, uint64_t seed);

}  // namespace vkamp::data
