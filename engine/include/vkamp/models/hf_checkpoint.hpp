// Hugging Face model folders of the Llama family: config.json, and the
// weights in model.safetensors or in shards listed by
// model.safetensors.index.json. Anything a folder gets wrong (an
// architecture vkamp does not build, a missing, extra or mis-shaped tensor,
// a vocabulary the tokenizer, the embedding and lm_head disagree on, a dtype
// other than F32, F16 or BF16) is a ConfigError naming the file and
// what was expected (binaries exit 2).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "vkamp/graph/graph.hpp"
#include "vkamp/graph/param_layout.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/models/llama.hpp"

namespace vkamp::models {

// The architectures llama_graph builds.
inline constexpr const char* kHfArchitectures[] = {"LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM"};

// dir/config.json.
LlamaConfig read_hf_config(const std::string& dir);

// Throws ConfigError when config.json's vocab_size leaves the tokenizer's
// ids (`tokenizer_ids`: its largest id + 1) without an embedding row.
void check_tokenizer_fits(const LlamaConfig& c, size_t tokenizer_ids, const std::string& dir);

// Whether a graph tensor is a LoRA adapter ("...q_proj.lora_A.weight"),
// which a base model's folder does not hold.
bool is_lora_adapter(const std::string& name);

// Every parameter and frozen parameter of the graph but the adapters, read
// from the folder's safetensors and converted to floats one tensor at a
// time (the files are never held in memory whole), handed to `put`.
using TensorSink = std::function<void(const std::string& name, std::vector<float>&& values)>;
void load_hf_weights(const std::string& dir, const graph::Graph& g, const TensorSink& put);
// The same in slices of at most kLoadSliceBytes of the file: `values` are
// tensor `name`'s elements from `first` on, so host memory holds a slice,
// never a whole tensor (a real vocabulary's embedding is hundreds of MiB).
// Returns the bytes read.
inline constexpr uint64_t kLoadSliceBytes = 16u << 20;
using TensorSliceSink = std::function<void(const std::string& name, uint64_t first, std::vector<float>&& values)>;
uint64_t load_hf_weight_slices(const std::string& dir, const graph::Graph& g, const TensorSliceSink& put);

// A model folder that Hugging Face and llama.cpp's converter read: the
// files of `base_dir` that describe the model (config.json, the tokenizer
// files, chat_template.jinja, generation_config.json) copied, and model.safetensors holding each
// parameter of `g` (a graph without adapters) as `values` gives it, in
// `dtype` (F32, F16 or BF16), written atomically.
void write_hf_folder(const std::string& dir, const std::string& base_dir, const graph::Graph& g, io::DType dtype,
                     const std::function<std::vector<float>(const std::string& name)>& values);

}  // namespace vkamp::models
