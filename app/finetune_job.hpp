// A fine-tune of a Llama-family model as a job: the model (a Hugging Face
// folder, or a --synthetic preset), the packed text, the LoRA graph on the
// frozen base, the pretrained weights loaded into the trainer, and what
// the run keeps (adapters in PEFT's layout, a merged or whole model
// folder). vkamp-finetune, llama_tiny and vkamp-studio --finetune run it.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "app/run_loop.hpp"
#include "app/run_options.hpp"
#include "app/workloads.hpp"
#include "vkamp/io/gguf.hpp"
#include "vkamp/models/llama.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::app {

struct FineTuneSource {
  models::LlamaConfig config;
  std::string name;  // the folder or file as given, or the preset's name
  std::shared_ptr<const io::GgufFile> gguf;  // --model FILE.gguf, mapped
};
// Throws ConfigError when neither or both of --model and --synthetic are given.
FineTuneSource finetune_source(const FineTuneOptions& o);
// --quantize's block type; ConfigError for a name vkamp does not hold or a
// run without a frozen base.
std::optional<quant::GgmlType> finetune_quantize_type(const FineTuneOptions& o);
// The graph a fine-tune trains: llama_graph with the LoRA settings, its
// frozen base held in the GGUF file's own blocks or in --quantize's.
graph::Graph finetune_graph(const FineTuneOptions& o, const FineTuneSource& source);
// The weights of --model (a folder or a GGUF file) into the model; the bytes read.
uint64_t load_finetune_weights(const FineTuneOptions& o, const FineTuneSource& source, train::Model& model);

models::LoraConfig lora_config(const FineTuneOptions& o);

// Throws ConfigError for outputs the flags cannot give (no --out for a
// run that trains, --merge without adapters, a folder without a base, a
// GGUF base's full model) and for a --quantize it cannot hold.
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
