#include "vkamp/train/kernel_profile.hpp"

#include <algorithm>

namespace vkamp::train {

const std::vector<std::string>& kernel_classes() {
  static const std::vector<std::string> classes = {"gemm",        "attention", "layer_norm", "softmax", "elementwise",
                                                   "optimizer",   "amp_check", "other"};
  return classes;
}

std::string kernel_class(std::string_view label) {
  auto starts = [&](std::string_view prefix) { return label.substr(0, prefix.size()) == prefix; };
  if (starts("gemm") || starts("im2col") || starts("col2im") || starts("conv")) return "gemm";
  if (starts("attention")) return "attention";
  if (starts("layer_norm") || starts("rms_norm")) return "layer_norm";  // the normalisations
  if (starts("softmax")) return "softmax";
  if (starts("optimizer")) return "optimizer";
  if (starts("amp_check") || starts("step_control") || starts("inject_overflow") || starts("layer_scale"))
    return "amp_check";
  for (std::string_view e : {"add", "bias_add", "scale", "convert", "activation", "grad_accumulate", "concat"})
    if (label == e) return "elementwise";
  return "other";
}

void KernelProfile::add(const std::vector<DispatchTime>& timings) {
  if (timings.empty()) return;
  const std::vector<std::string>& classes = kernel_classes();
  class_ms_.resize(classes.size());
  for (const DispatchTime& t : timings) {
    const std::string c = kernel_class(t.label);
    class_ms_[size_t(std::find(classes.begin(), classes.end(), c) - classes.begin())] += t.ms;
  }
  ++steps_;
  // The places are those of the first timed step's layout; other layouts
  // (rare steps with extra dispatches) are left out of the ranking.
  if (per_place_.empty())
    for (const DispatchTime& t : timings) per_place_.push_back({uint32_t(per_place_.size()), t.label, 0});
  if (timings.size() != per_place_.size()) return;
  for (size_t i = 0; i < timings.size(); ++i)
    if (timings[i].label != per_place_[i].label) return;
  for (size_t i = 0; i < timings.size(); ++i) per_place_[i].ms += timings[i].ms;
  ++place_steps_;
}

std::vector<std::pair<std::string, double>> KernelProfile::by_class() const {
  std::vector<std::pair<std::string, double>> out;
  for (size_t i = 0; i < kernel_classes().size(); ++i)
    out.push_back({kernel_classes()[i], steps_ && i < class_ms_.size() ? class_ms_[i] / steps_ : 0.0});
  return out;
}

std::vector<DispatchShare> KernelProfile::top(size_t n) const {
  if (!place_steps_) return {};
  std::vector<DispatchShare> all = per_place_;
  for (DispatchShare& d : all) d.ms /= place_steps_;
  std::stable_sort(all.begin(), all.end(), [](const DispatchShare& a, const DispatchShare& b) { return a.ms > b.ms; });
  all.resize(std::min(n, all.size()));
  return all;
}

}  // namespace vkamp::train
