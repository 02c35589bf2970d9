// The app's control column: run buttons (pause, step, inject overflow),
// a new run's settings (sample, precision, loss-scale mode), the dynamic
// scaling knobs applied live, and saving a checkpoint or the metrics. Every
// field is checked with the trainer's own validation before it is applied.
#pragma once
#include <string>
#include <vector>

#include "app/run_history.hpp"
#include "app/run_options.hpp"
#include "app/workloads.hpp"
#include "training_session.hpp"
#include "vkamp/config/train_config.hpp"

namespace vkamp::ui {

struct StudioControls {
  std::vector<app::Workload> jobs;  // the samples, and vkamp-train's job when --train was given
  int sample = 0;            // index into jobs
  app::RunOptions cfg;       // the next run's settings, edited in place
  config::TrainConfig running;  // the settings of the run in progress
  unsigned runs = 1;         // runs started (the one at launch included): numbers a new run's files
  config::ScalerConfig knobs; // the live knobs, edited before "Apply"
  char checkpoint_path[256] = "vkamp-studio.ckpt";
  char metrics_path[256] = "vkamp-studio-metrics.jsonl";
  std::string error;         // the last rejected input, shown in red
  std::string notice;        // the last thing done, shown in grey
};

// Draws the column; acts through `session`. `history` is the UI's copy.
void draw_controls(StudioControls& c, TrainingSession& session, const app::RunHistory& history);

}  // namespace vkamp::ui
