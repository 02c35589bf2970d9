// LoRA adapters in Hugging Face PEFT's folder layout, which
// PeftModel.from_pretrained reads: adapter_model.safetensors with the
// adapters under PEFT's names ("base_model.model." + the module path +
// ".lora_A.weight", [r, in]; ".lora_B.weight", [out, r]) and
// adapter_config.json (peft_type LORA, task_type CAUSAL_LM, r, lora_alpha,
// target_modules, lora_dropout, bias "none", base_model_name_or_path).
// Both files are replaced atomically: a run cut off leaves the old ones.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "vkamp/graph/graph.hpp"
#include "vkamp/models/llama.hpp"

namespace vkamp::models {

// PEFT's tensor name of a vkamp adapter ("model.layers.0...lora_A.weight").
std::string peft_name(const std::string& adapter);

// `values(name)` gives each adapter's fp32 values (the masters).
void write_peft_adapter(const std::string& dir, const graph::Graph& g, const LoraConfig& lora,
                        const std::string& base_model,
                        const std::function<std::vector<float>(const std::string& name)>& values);

// W += (alpha / r) B A for one adapted projection: w {out, in}, a {r, in},
// b {out, r}, each product summed in double and added once (PEFT's
// merge_and_unload), so every caller folds an adapter to the same bits.
void fold_adapter(std::vector<float>& w, const std::vector<float>& a, const std::vector<float>& b, const LoraConfig& lora);

// dir/adapter_config.json: rank, alpha and targets (ConfigError naming the
// file for one that is not a LoRA adapter vkamp can apply).
LoraConfig read_peft_config(const std::string& dir);
// Each adapter of the graph from dir/adapter_model.safetensors, checked
// against the graph's shapes; a missing or extra tensor is a ConfigError.
void load_peft_adapter(const std::string& dir, const graph::Graph& g,
                       const std::function<void(const std::string& name, std::vector<float>&& values)>& put);

}  // namespace vkamp::models
