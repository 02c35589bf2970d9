// What a run from the command line follows from one evaluation point to
// the next: the steps' losses, skips and scale for the line it prints at
// each epoch end (or every --eval-every updates), the best held-out metric
// so far (--save-best), and --early-stop's patience.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "vkamp/train/step_metrics.hpp"

namespace vkamp::app {

// Whether held-out value `a` beats `b` for `metric`: a higher "accuracy",
// a lower "loss" or "mse".
bool better(const std::string& metric, double a, double b);

class EpochWatch {
 public:
  // `epochs`: the run's, for "epoch 3/10"; `by_step`: evaluation points
  // every --eval-every updates, named by their update ("step 500");
  // `patience`: --early-stop's evaluations without improvement (0 = none).
  EpochWatch(uint32_t epochs, bool by_step, uint32_t patience);

  void add(const train::StepMetrics& m);

  struct Verdict {
    std::string line;       // "epoch 3/10  train loss 0.4123  val loss ...  skipped 0  scale 65536"
    bool improved = false;  // the best held-out value so far (the first one is)
    bool stop = false;      // --early-stop: `patience` evaluations since the best
  };
  // At an evaluation point: the line, and what it means; starts the next
  // point's tally.
  Verdict end(const train::EpochEnd& e);

  // The best held-out evaluation so far (none without a held-out set).
  const std::optional<train::EpochEnd>& best() const { return best_; }
  uint32_t since_best() const { return since_best_; }
  // "epoch 4" or "step 500": where an evaluation point was.
  std::string where(const train::EpochEnd& e) const;

 private:
  uint32_t epochs_, patience_;
  bool by_step_;
  double loss_sum_ = 0;
  uint32_t applied_ = 0, skipped_ = 0;
  float scale_ = 0;
  std::optional<train::EpochEnd> best_;
  uint32_t since_best_ = 0;
};

// "val accuracy 93.40%", "val loss 1.2345", "val mse 0.0123": a held-out value as the lines print it.
std::string held_out_text(const std::string& metric, double value);

}  // namespace vkamp::app
