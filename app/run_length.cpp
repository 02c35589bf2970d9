#include "app/run_length.hpp"

namespace vkamp::app {

std::string run_length_text(const config::TrainConfig& cfg, uint32_t budget) {
  const std::string steps = std::to_string(budget) + (budget == 1 ? " step" : " steps");
  const std::string epochs = std::to_string(cfg.epochs) + (cfg.epochs == 1 ? " epoch" : " epochs");
  std::string s = cfg.max_steps && budget == cfg.max_steps
                      ? steps + " (--max-steps; " + epochs + " would be more)"
                      : epochs + " (" + steps + ")";
  if (cfg.schedule_steps && cfg.schedule_steps != budget)
    s += "; the schedule's total_iters (" + std::to_string(cfg.schedule_steps) +
         ") no longer matches the run: vkamp's cosine reaches 0 at step " + std::to_string(budget);
  return s;
}

}  // namespace vkamp::app
