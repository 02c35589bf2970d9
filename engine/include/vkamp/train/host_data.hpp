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

  // Rows [first, first + n): a held-out split of one data set.
  HostData rows(uint32_t first, uint32_t n) const {
    HostData r{n, features, {}, {}, {}};
    r.x.assign(x.begin() + size_t(first) * features, x.begin() + size_t(first + n) * features);
    if (!labels.empty()) r.labels.assign(labels.begin() + first, labels.begin() + first + n);
    if (!targets.empty()) {
      const size_t width = targets.size() / count;
      r.targets.assign(targets.begin() + first * width, targets.begin() + (first + n) * width);
    }
    return r;
  }
};

}  // namespace vkamp::train
