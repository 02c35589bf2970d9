#include "vkamp/train/scale_suggestion.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "vkamp/train/step_params.hpp"

namespace vkamp::train {

double ScaleSuggestion::scale() const { return std::ldexp(1.0, exp); }

void ScaleSuggester::add(const TensorHistogram& h) {
  if (steps_.empty() || steps_.back() != h.step) steps_.push_back(h.step);
  auto it = std::find_if(sums_.begin(), sums_.end(), [&](const Sum& s) { return s.tensor == h.tensor; });
  if (it == sums_.end()) {
    sums_.push_back({h.tensor, {}});
    it = sums_.end() - 1;
  }
  for (uint32_t b = 0; b < kHistBins; ++b) it->bins[b] += h.bins[b];
}

ScaleSuggestion ScaleSuggester::suggest(Format f, const config::ScalerConfig& sc) const {
  const FormatExponents fe = format_exponents(f);
  const auto [k_lo, k_hi] = scale_exponent_range(sc);
  // The chooser's input: every tensor added up (scale_choice.h).
  float counts[kHistLogBins] = {};
  double total = 0;
  for (const Sum& s : sums_) {
    for (uint32_t b = 0; b < kHistLogBins; ++b) counts[b] += float(s.bins[b]);
    for (double c : s.bins) total += c;
  }
  const ScaleChoice c = choose_scale(counts, float(total), fe.sub_exp, fe.top_exp, k_lo, k_hi, float(sc.underflow_target));
  ScaleSuggestion r;
  r.exp = c.exp;
  r.met = c.met != 0;
  r.headroom = c.headroom;
  r.underflow = c.underflow;
  r.histograms = uint32_t(steps_.size());
  const int flushed = flushed_bins(fe.sub_exp, c.exp);
  for (const Sum& s : sums_) {
    TensorAtScale t;
    t.tensor = s.tensor;
    for (double n : s.bins) t.elements += n;
    double under = 0;
    for (int b = 0; b < flushed; ++b) under += s.bins[b];
    t.underflow = t.elements > 0 ? under / t.elements : 0;
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
                "loss-scale suggestion (%s, underflow target %.4g%% of the gradient elements), from the histograms "
                "of %u steps at the dynamic scale:\n",
                format_name(f), 100 * underflow_target, s.histograms);
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
  std::snprintf(line, sizeof line, "  %-36s %12s %9s %11s\n", "tensor", "elements", "headroom", "underflow");
  add(line);
  for (const TensorAtScale& t : s.tensors) {
    char head[16];
    if (t.any) std::snprintf(head, sizeof head, "%d", t.headroom);
    else std::snprintf(head, sizeof head, "-");
    std::snprintf(line, sizeof line, "  %-36s %12.0f %9s %10.4g%%\n", t.tensor.c_str(), t.elements, head,
                  100 * t.underflow);
    add(line);
  }
  add("YAML for a --config file:\n");
  add(suggestion_yaml(s).c_str());
  return out;
}

}  // namespace vkamp::train
