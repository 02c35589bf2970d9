// vkamp-finetune's own rows (Rows::FineTune): the model folder or a preset
// shape, the text, the output folder, the LoRA adapters, the sequence
// length and the validation split.
#pragma once
#include <vector>

#include "app/run_options.hpp"

namespace vkamp::app {

std::vector<config::Setting<RunOptions>> finetune_rows();

}  // namespace vkamp::app
