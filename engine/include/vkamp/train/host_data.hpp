// A dataset in host memory as the trainer takes it, and the loss it is for.
#pragma once
#include <cstdint>
#include <span>
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

  // The examples `ids`, in that order (a shuffled split).
  HostData select(std::span<const uint32_t> ids) const {
    HostData r{uint32_t(ids.size()), features, {}, {}, {}};
    const size_t width = targets.empty() ? 0 : targets.size() / count;
    for (uint32_t e : ids) {
      r.x.insert(r.x.end(), x.begin() + size_t(e) * features, x.begin() + size_t(e + 1) * features);
      if (!labels.empty()) r.labels.push_back(labels[e]);
      if (width) r.targets.insert(r.targets.end(), targets.begin() + e * width, targets.begin() + (e + 1) * width);
    }
    return r;
  }
};

}  // namespace vkamp::train
