// Text from a Llama-family Hugging Face folder, optionally with a PEFT
// LoRA adapter folded into its weights: the prompt through the folder's
// tokenizer (or a chat template), through the model at once (prefill),
// then one token at a time from the KV-cache decoder
// (models/llama_decoder.hpp), drawn by app/sampling.hpp, each piece of
// text handed to `emit` as soon as it decodes.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/sampling.hpp"
#include "vkamp/context.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/models/llama.hpp"
#include "vkamp/train/model.hpp"

namespace vkamp::app {

struct LlamaGeneration {
  std::string model_dir, adapter_dir;  // adapter: a PEFT folder or GGUF LoRA file; empty = none
  std::optional<Format> precision;     // unset: bf16 for a bfloat16 checkpoint, else fp16
  std::string prompt;
  // Chat: the prompt as a user turn (chat), or a conversation (messages_json,
  // a JSON list of messages), rendered with the model's chat template (or
  // chat_template's file) and the generation prompt; generation stops at the
  // template's end-of-turn token as well as at EOS.
  bool chat = false;
  std::string messages_json;
  std::string chat_template;
  uint32_t max_new_tokens = 64;
  Sampling sampling;
  uint64_t seed = 1;
};

struct Generated {
  std::vector<int32_t> prompt_ids;  // what the model read first
  std::vector<int32_t> ids;  // the new tokens (EOS or the end of turn, when drawn, last)
  std::string text;
  Format precision = Format::F16;
};

// Every weight of a Hugging Face folder or GGUF file frozen in `precision`,
// a GGUF file's quantized matrices in its own blocks (as llama.cpp holds
// them), with a LoRA adapter folded in: a PEFT folder, or a GGUF adapter
// file as llama.cpp's --lora loads it (adapter_path empty: none; the
// matrices it adapts in `precision`): what the KV-cache decoder reads,
// through LlamaDecoder::frozen_weights(model->frozen()).
struct FrozenLlama {
  models::LlamaConfig config;
  std::unique_ptr<train::Model> model;
};
FrozenLlama load_frozen_llama(Context& ctx, const std::string& model_path, const std::string& adapter_path,
                              Format precision, uint64_t seed);

// ConfigError (exit 2) for a folder, adapter or prompt that cannot be used:
// a prompt and max_new_tokens past max_position_embeddings is one.
Generated generate_llama(Context& ctx, const LlamaGeneration& g, const std::function<void(const std::string&)>& emit);

}  // namespace vkamp::app
