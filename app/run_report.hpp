// What a run from the command line prints about itself, shared by the
// samples, vkamp-train and vkamp-studio: the run's one-line description, the
// end-of-run summary (counts, underflow and headroom, the best evaluation by
// --early-stop-monitor and where --early-stop stopped, GPU time, memory,
// --profile's kernels) and a failed run's message.
#pragma once
#include <string>

#include "app/run_loop.hpp"
#include "app/run_options.hpp"
#include "vkamp/config/train_config.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::app {

// "fp16, dynamic loss scale" and the like, for headers and tables.
std::string describe_run(const config::TrainConfig& cfg);

// Reports a run that fail-fast stopped (and where its last good checkpoint
// is) on stderr; returns the exit status 1.
int report_failure(const char* name, const config::TrainConfig& cfg, const train::TrainSummary& s);

// The end-of-run summary: the counts, underflow and headroom, the best
// evaluation by the monitor (its value and where) and where --early-stop
// stopped, GPU time per step and device memory; with --profile also GPU
// time per kernel and the commands per step.
void print_run_report(const RunOptions& cfg, train::Trainer& trainer, const RunResult& s);
// The report's device memory line: the model's plan (parameters,
// optimizer state, activations, workspace, data) and every device buffer
// the context holds, now and at most.
void print_device_memory(train::Trainer& trainer);
// --dry-run: says the run stopped before training, prints the device
// memory, returns the exit status 0.
int report_dry_run(const char* name, train::Trainer& trainer);

// The summary's best-evaluation lines, each ending in a new line: "  best
// val_loss 0.4123 at epoch 4 (val accuracy 93.40%)", and where --early-stop
// stopped. Empty without a held-out set.
std::string best_summary(const RunOptions& cfg, const RunResult& s);

// One line of the end-of-run summary shared by the samples.
void print_summary(const config::TrainConfig& cfg, const train::TrainSummary& s);

// The summary's underflow lines (s.underflow), each ending in a new line:
// the share of gradient elements the loss scale saved (mean and last
// step), the subnormal and zero shares, the tensor that lost the most
// unscaled, and the smallest headroom. Empty when no step ran.
std::string underflow_summary(Format precision, const train::TrainSummary& s);

}  // namespace vkamp::app
