// What every headless training sample shares: flag parsing with --help,
// readable errors with exit status 2 for bad input, the Vulkan context, and
// a training run with a progress bar, --metrics logging and a summary.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vkamp/context.hpp"
#include "app/run_options.hpp"
#include "vkamp/config/train_config.hpp"
#include "vkamp/train/trainer.hpp"
#include "app/run_history.hpp"

namespace vkamp::samples {

struct SampleInfo {
  const char* name;   // "fashion_mlp"
  const char* about;  // one paragraph for --help
  app::Rows rows = app::Rows::Common;  // WithData: vkamp-train's data flags too
};

// Parses flags over `defaults`, creates the Context, and runs `body`.
// Returns the process exit status: 0, 1 (runtime failure, e.g. fail-fast),
// or 2 (bad flags, config, data or checkpoint).
int sample_main(const SampleInfo& info, app::RunOptions defaults, int argc, char** argv,
                const std::function<int(app::RunOptions&, Context&)>& body);

// The whole of a classifier sample (fashion_mlp, lenet5): trains the named
// workload (app/workloads.hpp) over its defaults and the flags, then
// reports test accuracy, the summary, GPU time per kernel and --report.
int classifier_sample_main(const char* workload, const char* about, int argc, char** argv);

// Extra observers of a run, called after the progress bar and the log.
struct Observers {
  std::function<void(const train::StepMetrics&)> step;
  std::function<void(const train::TensorHistogram&)> histogram;
  std::function<void(const train::EpochEnd&)> epoch_end;
};

// The trainer's summary of a run, and what the application decided in it.
struct RunResult : train::TrainSummary {
  std::string stopped_early_at;         // "epoch 7" when --early-stop ended the run, else empty
  std::optional<train::EpochEnd> best;  // the best held-out evaluation (none without a held-out set)
  std::string best_at;                  // "epoch 4" (or "step 500" with --eval-every)
  std::vector<float> best_weights;      // --save-best: the master weights at `best`
  std::vector<float> best_buffers;      // and the buffers (BatchNorm's running statistics)
  // --loss-scale suggest: the suggestion was printed, and the caller ends
  // there (exit 0, no weights written, no evaluation).
  bool suggested = false;
};

// Trains one configuration with a progress bar (labelled `label`) and the
// --metrics log, recording the run into `history` when given (for
// --report). At each evaluation point (every epoch, or --eval-every) it
// prints a line on stdout: the train loss since the last line, the
// held-out loss and metric (Trainer::set_held_out), the skipped steps and
// the scale (none with --quiet); the evaluation also goes to the log and
// the history. --early-stop ends the run between steps, --save-best keeps
// the best evaluation's weights; both throw ConfigError without a
// held-out set. With --loss-scale suggest it prints the suggestion from the
// run's histograms (RunResult::suggested). The trainer stays usable
// afterwards.
RunResult train_with_progress(train::Trainer& trainer, const app::RunOptions& cfg, const std::string& label,
                              const Observers& also = {}, ui::RunHistory* history = nullptr);

// --report FILE.png: draws the dashboard of `history` offscreen and writes
// it (nothing when cfg.report_path is empty). Prints where it went.
void write_report(const app::RunOptions& cfg, const ui::RunHistory& history);

// The trained weights' held-out metric (Trainer::evaluate's): the run's
// last evaluation when there was one and it read the whole set, else
// evaluated now (--eval-iters samples the evaluations during training).
double final_held_out(train::Trainer& trainer, const config::TrainConfig& cfg, const ui::RunHistory& history,
                      const data::HostData& held_out);

// --init-from FILE: loads the file's weights (PyTorch names and layouts,
// torch_layout.hpp) into the trainer's model, checked against it; call it
// before training. Nothing when the flag is not given. Throws
// io::FormatError naming the file.
void init_weights_from_file(const app::RunOptions& cfg, train::Trainer& trainer);

// --save FILE.safetensors: writes the model's weights as cfg.save_dtype,
// with the vkamp.* metadata of the run `s`: the last weights, or with
// --save-best those of s.best. Nothing when the flag is not given; call it
// only after a successful run. Prints where they went and, with
// --save-best, from which epoch. `extra` adds metadata (vkamp-train's
// classes and standardization).
void save_weights(const app::RunOptions& cfg, train::Trainer& trainer, const RunResult& s,
                  const std::map<std::string, std::string>& extra = {});

// "fp16, dynamic loss scale" and the like, for headers and tables.
std::string describe_run(const config::TrainConfig& cfg);

// Reports a run that fail-fast stopped (and where its last good checkpoint
// is); returns the exit status 1.
int report_failure(const char* name, const config::TrainConfig& cfg, const train::TrainSummary& s);

// The end-of-run summary: the counts, underflow and headroom,
// --early-stop's and the best evaluation's lines, GPU time per step and
// device memory; with --profile also GPU time per kernel and the commands
// per step.
void print_run_report(const app::RunOptions& cfg, train::Trainer& trainer, const RunResult& s);

// One line of the end-of-run summary shared by the samples.
void print_summary(const config::TrainConfig& cfg, const train::TrainSummary& s);

// The summary's underflow lines (s.underflow), each ending in a new line:
// the share of gradient elements the loss scale saved (mean and last
// step), the subnormal and zero shares, the tensor that lost the most
// unscaled, and the smallest headroom. Empty when no step ran.
std::string underflow_summary(Format precision, const train::TrainSummary& s);

}  // namespace vkamp::samples
