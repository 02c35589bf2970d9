#include "vkamp/train/scale_suggestion.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "vkamp/train/step_params.hpp"

namespace vkamp::train {

double ScaleSuggestion::scale() const { return std::ldexp(1.0, exp); }

void ScaleSuggester::add(const TensorHistogram& h) {
  if (steps_.empty() || steps_.back().step != h.step) steps_.push_back({h.step, {}});
  size_t index = size_t(std::find(names_.begin(), names_.end(), h.tensor) - names_.begin());
  if (index == names_.size()) names_.push_back(h.tensor);
  steps_.back().tensors.emplace_back(index, h.bins);
}

ScaleSuggestion ScaleSuggester::suggest(Format f, const config::ScalerConfig& sc) const {
  const FormatExponents fe = format_exponents(f);
  const auto [k_lo, k_hi] = scale_exponent_range(sc);
  // The chooser's input, added up as step_control.comp adds auto's window:
  // per step the tensors in uint, then into float in bin order.
  float counts[kHistLogBins] = {};
  float total = 0;
  struct Sum {
    std::array<double, kHistBins> bins{};
    uint32_t histograms = 0;
  };
  std::vector<Sum> sums(names_.size());
  ScaleSuggestion r;
  r.window = sc.suggest_steps;
  for (const Step& step : steps_) {
    if (step.step >= sc.suggest_steps) break;
    std::array<uint32_t, kHistBins> column{};
    for (const auto& [index, bins] : step.tensors) {
      for (uint32_t b = 0; b < kHistBins; ++b) {
        column[b] += bins[b];
        sums[index].bins[b] += bins[b];
      }
      sums[index].histograms += 1;
    }
    float sum = 0;
    for (uint32_t b = 0; b < kHistBins; ++b) {
      if (b < kHistLogBins) counts[b] += float(column[b]);
      sum += float(column[b]);
    }
    total += sum;
    r.histograms += 1;
  }
  const ScaleChoice c =
      choose_scale(counts, total, fe.normal_exp, fe.top_exp, k_lo, k_hi, float(sc.underflow_target));
  r.exp = c.exp;
  r.met = c.met != 0;
  r.headroom = c.headroom;
  r.underflow = c.underflow;
  const int under_bins = below_normal_bins(fe.normal_exp, c.exp);
  for (size_t i = 0; i < names_.size(); ++i) {
    const Sum& s = sums[i];
    if (s.histograms == 0) continue;
    TensorAtScale t;
    t.tensor = names_[i];
    double all = 0, under = 0;
    for (double n : s.bins) all += n;
    for (int b = 0; b < under_bins; ++b) under += s.bins[b];
    t.elements = all / s.histograms;  // a tensor's histogram counts all its elements every time
    t.underflow = all > 0 ? under / all : 0;
    for (int b = int(kHistLogBins) - 1; b >= 0; --b)
      if (s.bins[b] > 0) {
        t.any = true;
        t.headroom = headroom_at(fe.top_exp, kHistMinExp + b, c.exp);
        break;
      }
    r.tensors.push_back(t);
  }
  return r;
}

std::string suggestion_yaml(const ScaleSuggestion& s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "loss_scaling_factor: %.17g\n", s.scale());
  return buf;
}

std::string suggestion_text(const ScaleSuggestion& s, Format f, double underflow_target) {
  std::string out;
  char line[256];
  auto add = [&](const char* text) { out += text; };
  std::snprintf(line, sizeof line,
                "loss-scale suggestion (%s, underflow target %.4g%% of the gradient elements below the smallest "
                "normal), from %u histograms of the first %u steps at the dynamic scale:\n",
                format_name(f), 100 * underflow_target, s.histograms, s.window);
  add(line);
  if (s.histograms == 0) {
    add("  no histograms were taken (no step ran): nothing to suggest\n");
    return out;
  }
  std::snprintf(line, sizeof line, "  suggested scale 2^%d = %.17g: headroom %d doublings, underflow %.4g%%\n", s.exp,
                s.scale(), s.headroom, 100 * s.underflow);
  add(line);
  if (!s.met && s.headroom < 0)
    add("  no scale in [min_loss_scale, max_loss_scale] keeps the largest gradients finite: this is the smallest\n");
  else if (!s.met)
    add("  no scale meets the underflow target without overflowing: this one loses the fewest\n");
  std::snprintf(line, sizeof line, "  %-36s %13s %9s %11s\n", "tensor", "elements/step", "headroom", "underflow");
  add(line);
  for (const TensorAtScale& t : s.tensors) {
    char head[16];
    if (t.any) std::snprintf(head, sizeof head, "%d", t.headroom);
    else std::snprintf(head, sizeof head, "-");
    std::snprintf(line, sizeof line, "  %-36s %13.0f %9s %10.4g%%\n", t.tensor.c_str(), t.elements, head,
                  100 * t.underflow);
    add(line);
  }
  add("YAML for a --config file:\n");
  add(suggestion_yaml(s).c_str());
  return out;
}

}  // namespace vkamp::train
