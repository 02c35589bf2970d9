// The fine-tuning run of vkamp-finetune and llama_tiny: the model (a
// folder, or a --synthetic preset), the packed text, the trainer with LoRA
// adapters on the frozen base, the validation loss before and after, and
// the adapters written in PEFT's layout into cfg.ft.out_dir. `name` labels
// the output. Returns the exit status (errors are thrown, as sample_main's
// body does).
#pragma once
#include "app/run_options.hpp"
#include "vkamp/context.hpp"

namespace vkamp::samples {

int finetune(app::RunOptions& cfg, Context& ctx, const char* name);

}  // namespace vkamp::samples
