// How long a run is, as its header line says it: "4 epochs (1872 steps)";
// "80 steps (--max-steps; 26.7 epochs)" when --max-steps sets the length
// (docs/cli.md); and, when a Model Zoo file's schedule (its total_iters) no
// longer matches the run, that vkamp's cosine now ends at the run's last
// step instead.
#pragma once
#include <string>

#include "vkamp/train/trainer.hpp"

namespace vkamp::app {

std::string run_length_text(const train::Trainer& trainer);

}  // namespace vkamp::app
