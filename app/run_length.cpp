#include "app/run_length.hpp"

#include <cstdio>

namespace vkamp::app {
namespace {

// "1 epoch", "3 epochs", "26.7 epochs", "0.0128 epochs": a run of
// --max-steps may end inside an epoch.
std::string epochs_text(uint32_t updates, uint32_t per_epoch) {
  if (updates % per_epoch == 0) {
    const uint32_t n = updates / per_epoch;
    return std::to_string(n) + (n == 1 ? " epoch" : " epochs");
  }
  const double e = double(updates) / per_epoch;
  char buf[32];
  std::snprintf(buf, sizeof buf, e >= 100 ? "%.0f epochs" : "%.3g epochs", e);
  return buf;
}

}  // namespace

std::string run_length_text(const train::Trainer& trainer) {
  const config::TrainConfig& cfg = trainer.config();
  const uint32_t budget = trainer.budget();
  const std::string steps = std::to_string(budget) + (budget == 1 ? " step" : " steps");
  const std::string epochs = epochs_text(budget, trainer.updates_per_epoch());
  std::string s = cfg.max_steps ? steps + " (--max-steps; " + epochs + ")" : epochs + " (" + steps + ")";
  if (cfg.schedule_steps && cfg.schedule_steps != budget)
    s += "; the schedule's total_iters (" + std::to_string(cfg.schedule_steps) +
         ") no longer matches the run: vkamp's cosine reaches 0 at step " + std::to_string(budget);
  return s;
}

}  // namespace vkamp::app
