// Hugging Face model folders of the Llama family: config.json, and the
// weights in model.safetensors or in shards listed by
// model.safetensors.index.json. Anything a folder gets wrong (an
// architecture vkamp does not build, a missing, extra or mis-shaped tensor,
// a dtype other than F32, F16 or BF16) is a ConfigError naming the file and
// what was expected (binaries exit 2).
#pragma once
#include <string>
#include <vector>

#include "vkamp/graph/graph.hpp"
#include "vkamp/graph/param_layout.hpp"
#include "vkamp/models/llama.hpp"

namespace vkamp::models {

// The architectures llama_graph builds.
inline constexpr const char* kHfArchitectures[] = {"LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM"};

// dir/config.json.
LlamaConfig read_hf_config(const std::string& dir);

// The graph's parameters from the folder's safetensors into `flat` (the
// fp32 master layout `layout`, as train::Model holds it), one tensor read
// and converted at a time, so the file is never held in memory whole.
void load_hf_weights(const std::string& dir, const graph::Graph& g, const std::vector<graph::ParamTensor>& layout,
                     std::vector<float>& flat);

}  // namespace vkamp::models
