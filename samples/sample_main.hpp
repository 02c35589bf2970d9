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
#include "app/run_loop.hpp"
#include "app/run_options.hpp"
#include "app/run_report.hpp"
#include "app/run_weights.hpp"
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

// Extra observers of a run (the loop's hooks), called after the loop has
// handled each event.
using Observers = app::RunHooks;
using app::RunResult;

// Trains one configuration through the one run loop (app/run_loop.hpp:
// the evaluation lines, --metrics, --early-stop, --save-best, the progress
// bar labelled `label`, --loss-scale suggest), recording the run into
// `history` when given (for --report). The trainer stays usable afterwards.
RunResult train_with_progress(train::Trainer& trainer, const app::RunOptions& cfg, const std::string& label,
                              const Observers& also = {}, app::RunHistory* history = nullptr);

// --report FILE.png: draws the dashboard of `history` offscreen and writes
// it (nothing when cfg.report_path is empty). Prints where it went.
void write_report(const app::RunOptions& cfg, const app::RunHistory& history);

// What the app layer shares with vkamp-studio: app/run_report.hpp and
// app/run_weights.hpp.
using app::describe_run;
using app::init_weights_from_file;
using app::print_run_report;
using app::print_summary;
using app::report_dry_run;
using app::report_failure;
using app::save_weights;
using app::underflow_summary;

}  // namespace vkamp::samples
