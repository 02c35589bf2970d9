// A dataset in host memory as the trainer takes it, and the loss it is for.
#pragma once
#include <cstdint>
#include <vector>

#include "vkamp/train/dataset.hpp"

namespace vkamp::train {

enum class LossKind { SoftmaxXent, MSE };

struct HostData {
  uint32_t count = 0, features = 0;
  std::vector<float> x;            // count x features
  std::vector<uint32_t> labels;    // SoftmaxXent: count
  std::vector<float> targets;      // MSE: count x model outputs

  static HostData classification(const ClassificationData& d) { return {d.count, d.features, d.x, d.y, {}}; }
};

}  // namespace vkamp::train
