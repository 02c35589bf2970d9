// A model's chat template (tokenizer_config.json's "chat_template", a Jinja
// program) rendered byte for byte as transformers' apply_chat_template
// renders it: jinja2's ImmutableSandboxedEnvironment(trim_blocks=True,
// lstrip_blocks=True) with loopcontrols and {% generation %}, tojson as
// json.dumps(ensure_ascii=False), raise_exception and strftime_now, and the
// variables messages, add_generation_prompt, tools=None, documents=None and
// the special tokens. tests/text/test_chat_template.cpp checks it against
// jinja2 on llama.cpp's real templates.
//
// A construct the renderer does not implement (a filter, test, method or
// statement) is refused when the template is parsed, by name; it never
// renders something else.
#pragma once
#include <cstddef>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vkamp/config_error.hpp"

namespace vkamp::text {

// A template that cannot be parsed or that refuses a conversation; the
// message names the template. A ConfigError: the programs exit 2 on it.
class ChatTemplateError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

struct ChatMessage {
  std::string role;
  std::string content;
};

struct ChatVariables {
  bool add_generation_prompt = false;
  // bos_token, eos_token, unk_token, pad_token, ... (those the tokenizer has).
  std::map<std::string, std::string> special_tokens;
  // The tools as a JSON list of schemas (transformers' form); empty for
  // None, which is what transformers passes without tools.
  std::string tools_json;
  // More variables, as a JSON object (what apply_chat_template's keyword
  // arguments pass, e.g. {"enable_thinking": false}); empty for none.
  std::string more_json;
  // strftime_now's clock; the local time where none is given.
  std::optional<std::tm> now;
};

struct ChatRender {
  std::string text;
  // The byte ranges {% generation %} blocks wrote, in order.
  std::vector<std::pair<std::size_t, std::size_t>> generation_spans;
};

class ChatTemplate {
 public:
  // Throws ChatTemplateError naming `name`, the line and the construct.
  static ChatTemplate parse(const std::string& source, const std::string& name);

  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;
  ~ChatTemplate();

  // Throws ChatTemplateError where the template refuses the conversation
  // (its raise_exception message, quoted) or fails as jinja2 would.
  ChatRender render(const std::vector<ChatMessage>& messages, const ChatVariables& vars) const;
  // The same for messages given as JSON text (a list of objects, whose
  // other fields the template may read). Throws ChatTemplateError on bad JSON.
  ChatRender render_json(std::string_view messages_json, const ChatVariables& vars) const;

  const std::string& name() const;
  // Whether the template marks the assistant's text with {% generation %}.
  bool has_generation_markers() const;

  struct Impl;

 private:
  explicit ChatTemplate(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vkamp::text
