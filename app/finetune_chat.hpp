// vkamp-finetune's conversations: a JSON Lines line {"messages": [{"role",
// "content"}, ...]} rendered with the model's chat template and encoded as
// transformers encodes a rendered chat (vkamp/text/chat_tokens.hpp), the
// loss on the assistant's tokens (their end of turn included) unless
// --train-on all.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vkamp/text/chat_tokens.hpp"

namespace vkamp::app {

struct ChatData {
  const text::ModelChat* chat = nullptr;  // the model's template, or --chat-template's; null where there is none
  bool train_on_all = false;              // --train-on all: every token a target
  std::string model;                      // the model folder, for the message when it has no template
  std::string template_error;             // why the template could not be read, where it could not
};

struct ChatDocument {
  std::vector<uint32_t> tokens;  // ids, those that are no target marked data::kNotTarget
  std::string marked;            // the rendered text with the targets in [[ ]], for the run's first lines
  bool from_generation_markers = false;
};

// Throws data::DataError naming `where` (file:line) for messages that are
// not a non-empty list of objects with string role and content, an unknown
// role, a conversation the template refuses (its message quoted), no
// template, or no assistant turn while the loss is on the assistant's.
ChatDocument chat_document(const nlohmann::ordered_json& messages, const std::string& where,
                           const text::Tokenizer& tok, const ChatData& chat);

}  // namespace vkamp::app
