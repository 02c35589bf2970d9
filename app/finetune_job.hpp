// A fine-tune of a Llama-family model as a job: the model (a Hugging Face
// folder, or a --synthetic preset), the packed text, the LoRA graph on the
// frozen base, the pretrained weights loaded into the trainer, and what
// the run keeps (adapters in PEFT's layout, a merged or whole model
// folder). vkamp-finetune, llama_tiny and vkamp-studio --finetune run it.
#pragma once
#include <string>

#include "app/run_loop.hpp"
#include "app/run_options.hpp"
#include "app/workloads.hpp"
#include "vkamp/models/llama.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::app {

struct FineTuneSource {
  models::LlamaConfig config;
  std::string name;  // the folder as given, or the preset's name
};
// Throws ConfigError when neither or both of --model and --synthetic are given.
FineTuneSource finetune_source(const FineTuneOptions& o);

models::LoraConfig lora_config(const FineTuneOptions& o);

// Throws ConfigError for outputs the flags cannot give (no --out for a
// run that trains, --merge without adapters, a folder without a base).
void check_finetune_outputs(const RunOptions& cfg);

// The packed sequences: from --data through the folder's tokenizer, or (a
// --synthetic plan of memory and speed) random tokens, 16 batches of them.
// `what` describes them. Throws data::DataError.
struct FineTuneSequences {
  data::HostData train, val;
  std::string what;
  std::string sample;  // "messages" data: the first conversation with its targets marked (else empty)
};
FineTuneSequences finetune_sequences(const RunOptions& cfg, const models::LlamaConfig& c);

// Writes what a trained run keeps into cfg.ft.out_dir (and merge_dir):
// with --save-best, the weights of the run's best evaluation; returns the
// lines saying what was written ("" for a plan without --out).
std::string write_finetune_outputs(const RunOptions& cfg, const FineTuneSource& source, const train::Trainer& trainer,
                                   const RunResult& run);

// The job vkamp-studio --finetune runs: load gives the sequences (train,
// and val as the held-out set), graph the LoRA model, prepare loads the
// folder's weights, finish writes the outputs.
Workload finetune_workload(const RunOptions& cfg);

// The fine-tuning tools' defaults: fp16 with dynamic loss scaling, AdamW
// without weight decay at lr 2e-4 (PEFT's examples' order), clipping at
// 1.0, batch 4, one epoch; --max-steps 0 read off the command line.
RunOptions finetune_defaults(int argc, char** argv);
// Whether the command line says --max-steps 0, which for a fine-tune means
// evaluate only (elsewhere 0 lets the epochs decide).
bool asks_no_steps(int argc, char** argv);

}  // namespace vkamp::app
