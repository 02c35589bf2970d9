// --loss-scale suggest: the power of two the shared chooser (scale_choice.h)
// picks from the gradient histograms of the first suggest_steps steps of a
// dynamic run, added up exactly as --loss-scale auto adds its warm-up window
// on the GPU (per step over the tensors in integers, then over the steps in
// float, in bin order), at auto's histogram interval: with suggest_steps
// equal to auto_warmup, suggest names auto's first choice. Per tensor, the
// headroom and underflow at that scale. The application prints it
// (suggestion_text) with a YAML line that --config reads back
// (suggestion_yaml).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vkamp/config/train_config.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/train/step_metrics.hpp"

namespace vkamp::train {

struct TensorAtScale {
  std::string tensor;
  double elements = 0;   // elements of one step's histogram (zeros, inf and NaN included)
  bool any = false;      // a finite nonzero gradient was seen (else headroom means nothing)
  int headroom = 0;      // doublings left before its largest binade may overflow (< 0: may overflow)
  double underflow = 0;  // of its elements, those below the smallest normal at the scale (chooser's rule)
};

struct ScaleSuggestion {
  int exp = 0;                 // the scale is 2^exp
  bool met = false;            // underflow <= the target without overflow
  int headroom = 0;            // the smallest over the tensors (1000 when no gradient was nonzero)
  double underflow = 0;        // of all elements
  uint32_t histograms = 0;     // steps whose histograms were added
  uint32_t window = 0;         // the steps they come from: 0 .. window - 1
  std::vector<TensorAtScale> tensors;  // in the order first seen
  double scale() const;
};

class ScaleSuggester {
 public:
  // One tensor's histogram of one step (Trainer::on_histogram), steps in order.
  void add(const TensorHistogram& h);
  // The choice over the histograms of steps 0 .. sc.suggest_steps - 1, for
  // the run's format and scale range.
  ScaleSuggestion suggest(Format f, const config::ScalerConfig& sc) const;

 private:
  struct Step {
    uint32_t step = 0;
    std::vector<std::pair<size_t, std::array<uint32_t, kHistBins>>> tensors;  // (index in names_, bins)
  };
  std::vector<std::string> names_;  // the tensors, in the order first seen
  std::vector<Step> steps_;
};

// "loss_scaling_factor: 1024\n": the line a --config file takes.
std::string suggestion_yaml(const ScaleSuggestion& s);
// The report: the scale, why, and per tensor its headroom and underflow.
std::string suggestion_text(const ScaleSuggestion& s, Format f, double underflow_target);

}  // namespace vkamp::train
