// A conversation as transformers turns it into training ids: the model's
// chat template (chat_template.jinja beside the tokenizer, or
// tokenizer_config.json's "chat_template") rendered with the tokenizer's
// special tokens, then encoded without added special tokens (the template
// writes its own BOS), and which ids are the assistant's (the targets).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vkamp/text/chat_template.hpp"
#include "vkamp/text/tokenizer.hpp"

namespace vkamp::text {

struct ModelChat {
  ChatTemplate chat_template;
  ChatVariables variables;  // the special tokens (bos_token, eos_token, ...) and additional_special_tokens
};

// The chat template of a model folder or GGUF file (its
// tokenizer.chat_template, with the BOS and EOS tokens' text): `template_file` where given (it
// supplies or replaces the model's), else DIR/chat_template.jinja, else
// tokenizer_config.json's chat_template (a string, or a list of named
// templates of which transformers takes "default"). None where the folder
// has no template. Throws ChatTemplateError (naming the file) on a template
// that cannot be read or parsed.
std::optional<ModelChat> load_model_chat(const std::string& folder, const std::string& template_file = {});
// The same, a ChatTemplateError saying where a template would be where the
// model has none.
ModelChat require_model_chat(const std::string& model, const std::string& template_file = {});

struct ChatTokens {
  std::string text;
  std::vector<int32_t> ids;
  std::vector<uint8_t> target;  // one per id: 1 on the assistant's tokens
  // How the assistant's tokens were found: the template's {% generation %}
  // spans, or (templates without them) by rendering prefixes as TRL does.
  bool from_generation_markers = false;
};

// Renders `messages_json` (a JSON list of message objects) and encodes it.
// The targets: for templates with {% generation %}, the tokens of each
// span (transformers' return_assistant_tokens_mask); for others, for each
// assistant message i, the tokens after the rendering of messages[:i] with
// the generation prompt up to the end of the rendering of messages[:i+1]
// (TRL's prompt/completion split, turn by turn), its end-of-turn included.
// Throws ChatTemplateError where the template refuses the conversation or
// where a span does not fall on token boundaries of the whole rendering.
// `find_targets` false (the loss on every token): the ids alone, targets 0.
ChatTokens tokenize_chat(const ModelChat& chat, const Tokenizer& tokenizer, const std::string& messages_json,
                         bool add_generation_prompt, bool find_targets = true);

// The template's end-of-turn token: the first token after an assistant
// message's content in a rendering of [user, assistant], where that token is
// a special token (<|eot_id|>, <|im_end|>, <end_of_turn>); none where it is
// not, or where the template refuses that conversation.
std::optional<int32_t> end_of_turn_token(const ModelChat& chat, const Tokenizer& tokenizer);

}  // namespace vkamp::text
