// --loss-scale suggest: the gradient histograms of a dynamic run added up
// per tensor, the power of two the shared chooser (scale_choice.h) picks
// from all of them, and per tensor the headroom and underflow at it. The
// application prints it (suggestion_text) with a YAML line that --config
// reads back (suggestion_yaml).
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
  double elements = 0;   // counted over the histograms (every step's elements)
  bool any = false;      // a finite nonzero gradient was seen (else headroom means nothing)
  int headroom = 0;      // doublings left before its largest binade may overflow (< 0: may overflow)
  double underflow = 0;  // of its elements, those that flush to zero at the scale
};

struct ScaleSuggestion {
  int exp = 0;                 // the scale is 2^exp
  bool met = false;            // underflow <= the target without overflow
  int headroom = 0;            // the smallest over the tensors (1000 when no gradient was nonzero)
  double underflow = 0;        // of all elements
  uint32_t histograms = 0;     // steps whose histograms were added
  std::vector<TensorAtScale> tensors;  // in the order first seen
  double scale() const;
};

class ScaleSuggester {
 public:
  // One tensor's histogram of one step (Trainer::on_histogram).
  void add(const TensorHistogram& h);
  // The choice over everything added, for the run's format and scale range.
  ScaleSuggestion suggest(Format f, const config::ScalerConfig& sc) const;

 private:
  struct Sum {
    std::string tensor;
    std::array<double, kHistBins> bins{};
  };
  std::vector<Sum> sums_;
  std::vector<uint32_t> steps_;  // distinct steps seen, in order
};

// "loss_scaling_factor: 1024\n": the line a --config file takes.
std::string suggestion_yaml(const ScaleSuggestion& s);
// The report: the scale, why, and per tensor its headroom and underflow.
std::string suggestion_text(const ScaleSuggestion& s, Format f, double underflow_target);

}  // namespace vkamp::train
