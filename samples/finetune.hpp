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

// The fine-tuning tools' defaults: fp16 with dynamic loss scaling, AdamW
// without weight decay at lr 2e-4 (PEFT's examples' order), clipping at
// 1.0, batch 4, one epoch; --max-steps 0 read off the command line.
app::RunOptions finetune_defaults(int argc, char** argv);

// Whether the command line says --max-steps 0, which for a fine-tune means
// evaluate only (elsewhere 0 lets the epochs decide).
bool asks_no_steps(int argc, char** argv);

}  // namespace vkamp::samples
