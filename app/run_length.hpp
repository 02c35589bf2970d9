// How long a run is, as its header line says it: "4 epochs (1872 steps)";
// "100 steps (--max-steps; 1872 epochs would be more)" when max_steps cuts
// the epochs; and, when a Model Zoo file's schedule (its total_iters) no
// longer matches the run, that vkamp's cosine now ends at the run's last
// step instead.
#pragma once
#include <cstdint>
#include <string>

#include "vkamp/config/train_config.hpp"

namespace vkamp::app {

// `budget`: the updates the run applies (Trainer::budget()).
std::string run_length_text(const config::TrainConfig& cfg, uint32_t budget);

}  // namespace vkamp::app
