// Named Llama-family shapes, for vkamp-finetune --synthetic: a model of a
// real checkpoint's size with random weights, built in memory, so that
// memory and speed can be planned without a download.
#pragma once
#include <optional>
#include <string>

#include "vkamp/models/llama.hpp"

namespace vkamp::models {

// Real shapes from their config.json: "qwen2.5-0.5b", "qwen2.5-1.5b", "tinyllama-1.1b",
// "llama-3.2-1b", "llama-3.1-8b"; and "llama-tiny" (a few layers of 64
// channels, for CPU drivers); nullopt for another name.
std::optional<LlamaConfig> llama_preset(const std::string& name);
// "tinyllama-1.1b, qwen2.5-0.5b, ...", for messages.
std::string llama_preset_names();

}  // namespace vkamp::models
