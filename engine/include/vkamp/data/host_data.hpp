// A dataset in host memory as the trainer takes it.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vkamp/config_error.hpp"
#include "vkamp/data/dataset.hpp"
#include "vkamp/gpu_abi/not_target.h"

namespace vkamp::data {

// A label (or a stream token) with this bit is no target (gpu_abi/not_target.h).
inline constexpr uint32_t kNotTarget = VKAMP_NOT_TARGET;

// x's values as token ids (HostData::x for a model that reads ids). A value
// that is not a whole number in [0, 2^24), where floats hold every integer,
// is a ConfigError.
inline std::vector<uint32_t> token_ids(const std::vector<float>& x) {
  std::vector<uint32_t> ids(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] >= 0 && x[i] < float(1 << 24) && x[i] == float(uint32_t(x[i]))))
      throw ConfigError("a token id (" + std::to_string(x[i]) + ") is not a whole number in [0, 2^24)");
    ids[i] = uint32_t(x[i]);
  }
  return ids;
}

struct HostData {
  uint32_t count = 0, features = 0;
  std::vector<float> x;            // count x features (token ids for a model that reads ids)
  std::vector<uint32_t> labels;    // SoftmaxXent: count x labels_per_example (one per output position)
  std::vector<float> targets;      // MSE: count x model outputs
  // A language-model set kept as one token stream, x and labels empty:
  // example i is the window tokens[i stride, i stride + features) and its
  // labels the tokens one position later. Windows overlap when stride <
  // features, so every offset of a text is an example without a copy each.
  // A token marked kNotTarget is an input whose label is no target.
  std::vector<uint32_t> tokens;
  uint32_t stride = 0;

  static HostData classification(const data::ClassificationData& d) { return {d.count, d.features, d.x, d.y, {}}; }
  // The windows of `window` tokens (and their next tokens) starting every
  // `stride` tokens, as many as fit.
  static HostData windows(std::vector<uint32_t> tokens, uint32_t window, uint32_t stride) {
    HostData d;
    d.features = window;
    d.stride = stride;
    d.count = window && stride && tokens.size() > window ? uint32_t((tokens.size() - window - 1) / stride + 1) : 0;
    d.tokens = std::move(tokens);
    return d;
  }
  bool is_windows() const { return stride != 0; }
  uint32_t labels_per_example() const {
    if (is_windows()) return features;
    return count ? uint32_t(labels.size() / count) : 1;
  }

  // Rows [first, first + n): a held-out split of one data set (windows
  // come back as x and labels).
  HostData rows(uint32_t first, uint32_t n) const {
    if (is_windows()) return window_rows(first, n);
    HostData r{n, features, {}, {}, {}};
    r.x.assign(x.begin() + size_t(first) * features, x.begin() + size_t(first + n) * features);
    if (!labels.empty()) {
      const size_t per = labels_per_example();
      r.labels.assign(labels.begin() + first * per, labels.begin() + (first + n) * per);
    }
    if (!targets.empty()) {
      const size_t width = targets.size() / count;
      r.targets.assign(targets.begin() + first * width, targets.begin() + (first + n) * width);
    }
    return r;
  }

  // Windows [first, first + n) as x (ids as floats, exact below 2^24) and labels.
  HostData window_rows(uint32_t first, uint32_t n) const {
    HostData r{n, features, {}, {}, {}};
    for (uint32_t e = first; e < first + n; ++e) {
      const size_t start = size_t(e) * stride;
      for (size_t i = start; i < start + features; ++i) r.x.push_back(float(tokens[i] & ~kNotTarget));
      r.labels.insert(r.labels.end(), tokens.begin() + start + 1, tokens.begin() + start + features + 1);
    }
    return r;
  }

  // The examples `ids`, in that order (a shuffled split).
  HostData select(std::span<const uint32_t> ids) const {
    HostData r{uint32_t(ids.size()), features, {}, {}, {}};
    const size_t width = targets.empty() ? 0 : targets.size() / count;
    const size_t per = labels_per_example();
    for (uint32_t e : ids) {
      if (is_windows()) {
        HostData one = window_rows(e, 1);
        r.x.insert(r.x.end(), one.x.begin(), one.x.end());
        r.labels.insert(r.labels.end(), one.labels.begin(), one.labels.end());
        continue;
      }
      r.x.insert(r.x.end(), x.begin() + size_t(e) * features, x.begin() + size_t(e + 1) * features);
      if (!labels.empty()) r.labels.insert(r.labels.end(), labels.begin() + e * per, labels.begin() + (e + 1) * per);
      if (width) r.targets.insert(r.targets.end(), targets.begin() + e * width, targets.begin() + (e + 1) * width);
    }
    return r;
  }
};

}  // namespace vkamp::data
