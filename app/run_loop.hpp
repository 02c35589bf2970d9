// The one training loop of every program that trains (the samples,
// vkamp-train and vkamp-studio): it drives a Trainer step by step and does
// what the run's flags ask between the steps. It prints the line of each
// evaluation point (every epoch, or --eval-every), writes --metrics,
// stops early (--early-stop, on --early-stop-monitor), keeps the best
// weights (--save-best), shows the progress bar, and prints --loss-scale
// suggest's result; the hooks tell the caller of each event (a dashboard's
// history, the studio's panels). Headless: no window, no dashboard.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/epoch_watch.hpp"
#include "app/run_options.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::app {

// What a caller hears of a run, after the loop has handled it. All are
// called on the thread that drives the loop.
struct RunHooks {
  std::function<void(const train::StepMetrics&)> step;
  std::function<void(const train::TensorHistogram&)> histogram;
  // Per tensor at the histogram steps only (every step's would swamp a
  // log; the step records carry the totals).
  std::function<void(const train::TensorUnderflow&)> tensor_underflow;
  // At each evaluation point, after its line: no step is in flight.
  std::function<void(const train::EpochEnd&)> epoch_end;
};

// The trainer's summary of a run, and what the loop decided in it.
struct RunResult : train::TrainSummary {
  std::string stopped_early_at;         // "epoch 7" when --early-stop ended the run, else empty
  std::optional<train::EpochEnd> best;  // the best evaluation by the monitor (none without a held-out set)
  double best_value = 0;                // its monitored value
  std::string best_at;                  // "epoch 4" (or "step 500" with --eval-every)
  std::string sampled;                  // " on 8 of 40 batches" when --eval-iters sampled the evaluations
  std::optional<train::EpochEnd> last_eval;  // the last evaluation point's
  std::vector<float> best_weights;      // --save-best: the master weights at `best`
  std::vector<float> best_buffers;      // and the buffers (BatchNorm's running statistics)
  // --loss-scale suggest: the suggestion was printed, and the caller ends
  // there (exit 0, no weights written, no evaluation).
  bool suggested = false;
};

// " on 8 of 40 batches" when the trainer's evaluations read a sample of its
// held-out set (--eval-iters), else "".
std::string sampled_text(const train::Trainer& trainer);

class RunLoop {
 public:
  // `label` names the progress bar. The trainer's held-out set
  // (Trainer::set_held_out) must be set before start().
  RunLoop(train::Trainer& trainer, const RunOptions& cfg, std::string label, RunHooks hooks = {});
  ~RunLoop();  // takes the loop's callbacks off the trainer
  RunLoop(const RunLoop&) = delete;
  RunLoop& operator=(const RunLoop&) = delete;

  // Checks the flags against the run (--early-stop and --save-best need a
  // held-out set with the monitored value; throws ConfigError), opens
  // --metrics, and starts the trainer (resuming when asked).
  void start();
  // One step (Trainer::advance), with whatever falls due; false once the
  // run is over (budget, fail-fast, or --early-stop).
  bool step();
  // Ends the run: the summary, the best evaluation, --loss-scale suggest's
  // result (printed). The trainer stays usable.
  RunResult finish();
  // start(), step() until the end, finish().
  RunResult run();

 private:
  void on_step(const train::StepMetrics& m);
  void on_epoch_end(const train::EpochEnd& e);
  void unhook();

  struct State;
  train::Trainer& trainer_;
  const RunOptions cfg_;
  RunHooks hooks_;
  std::string label_;
  std::unique_ptr<State> st_;
  RunResult result_;
};

// The trained weights' held-out metric: the last evaluation's when it was
// of the last update and read the whole set, else evaluated now over all
// of `held_out` (Trainer::held_out).
train::Trainer::HeldOut final_held_out(train::Trainer& trainer, const RunResult& s, const data::HostData& held_out);

}  // namespace vkamp::app
