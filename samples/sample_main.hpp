// What every headless training sample shares: flag parsing with --help,
// readable errors with exit status 2 for bad input, the Vulkan context, and
// a training run with a progress bar, --metrics logging and a summary.
#pragma once
#include <functional>
#include <map>
#include <string>

#include "vkamp/context.hpp"
#include "app/run_options.hpp"
#include "vkamp/config/train_config.hpp"
#include "vkamp/train/trainer.hpp"
#include "run_history.hpp"

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

// Trains one configuration with a progress bar (labelled `label`) and the
// --metrics log, recording the run into `history` when given (for
// --report). Each epoch's held-out evaluation (Trainer::set_held_out) goes
// to the log and the history. The trainer stays usable afterwards.
train::TrainSummary train_with_progress(train::Trainer& trainer, const app::RunOptions& cfg,
                                        const std::string& label, const Observers& also = {},
                                        ui::RunHistory* history = nullptr);

// --report FILE.png: draws the dashboard of `history` offscreen and writes
// it (nothing when cfg.report_path is empty). Prints where it went.
void write_report(const app::RunOptions& cfg, const ui::RunHistory& history);

// --init-from FILE: loads the file's weights (PyTorch names and layouts,
// torch_layout.hpp) into the trainer's model, checked against it; call it
// before training. Nothing when the flag is not given. Throws
// io::FormatError naming the file.
void init_weights_from_file(const app::RunOptions& cfg, train::Trainer& trainer);

// --save FILE.safetensors: writes the model's weights as cfg.save_dtype,
// with the vkamp.* metadata of the run `s`. Nothing when the flag is not
// given; call it only after a successful run. Prints where they went.
// `extra` adds metadata (vkamp-train's classes and standardization).
void save_weights(const app::RunOptions& cfg, train::Trainer& trainer, const train::TrainSummary& s,
                  const std::map<std::string, std::string>& extra = {});

// "fp16, dynamic loss scale" and the like, for headers and tables.
std::string describe_run(const config::TrainConfig& cfg);

// Reports a run that fail-fast stopped (and where its last good checkpoint
// is); returns the exit status 1.
int report_failure(const char* name, const config::TrainConfig& cfg, const train::TrainSummary& s);

// The end-of-run summary, GPU time per kernel and device memory.
void print_run_report(const config::TrainConfig& cfg, train::Trainer& trainer, const train::TrainSummary& s);

// One line of the end-of-run summary shared by the samples.
void print_summary(const config::TrainConfig& cfg, const train::TrainSummary& s);

}  // namespace vkamp::samples
