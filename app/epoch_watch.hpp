// What a run from the command line follows from one evaluation point to
// the next: the steps' losses, skips and scale for the line it prints at
// each epoch end (or every --eval-every updates), the best monitored
// held-out value so far (--save-best), and --early-stop's patience.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "app/monitor.hpp"
#include "vkamp/train/step_metrics.hpp"

namespace vkamp::app {

// --early-stop N, --early-stop-monitor and --early-stop-min-delta (which
// --save-best's "best" follows too).
struct StopRule {
  Monitor monitor = Monitor::ValLoss;
  uint32_t patience = 0;  // evaluations without improvement before stopping (0 = never)
  double min_delta = 0;
};

class EpochWatch {
 public:
  // `epochs`: the run's, for "epoch 3/10"; `by_step`: evaluation points
  // every --eval-every updates, named by their update ("step 500");
  // `sampled`: what the evaluations read when --eval-iters samples the
  // held-out set (" on 8 of 40 batches"), "" when they read all of it.
  EpochWatch(uint32_t epochs, bool by_step, StopRule rule, std::string sampled = "");

  void add(const train::StepMetrics& m);

  struct Verdict {
    std::string line;       // "epoch 3/10  train loss 0.4123  val loss ...  skipped 0  scale 65536"
    bool improved = false;  // the best monitored value so far (the first one is)
    bool stop = false;      // --early-stop: `patience` evaluations since the best
  };
  // At an evaluation point: the line, and what it means; starts the next
  // point's tally. Throws ConfigError when the evaluation has no value for
  // the monitor (check_monitor).
  Verdict end(const train::EpochEnd& e);

  // The best evaluation so far by the monitor (none without a held-out
  // set), and its monitored value.
  const std::optional<train::EpochEnd>& best() const { return best_; }
  double best_value() const { return best_value_; }
  uint32_t since_best() const { return since_best_; }
  const StopRule& rule() const { return rule_; }
  // "epoch 4" or "step 500": where an evaluation point was.
  std::string where(const train::EpochEnd& e) const;

 private:
  uint32_t epochs_;
  bool by_step_;
  StopRule rule_;
  std::string sampled_;
  double loss_sum_ = 0;
  uint32_t applied_ = 0, skipped_ = 0;
  float scale_ = 0;
  std::optional<train::EpochEnd> best_;
  double best_value_ = 0;
  uint32_t since_best_ = 0;
};

// "val accuracy 93.40%", "val loss 1.2345", "val mse 0.0123": a held-out value as the lines print it.
std::string held_out_text(const std::string& metric, double value);

}  // namespace vkamp::app
