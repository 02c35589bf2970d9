#include "app/finetune_chat.hpp"

#include <algorithm>

#include "vkamp/data/data_error.hpp"
#include "vkamp/data/host_data.hpp"

namespace vkamp::app {
namespace {

// The roles of OpenAI's and TRL's conversational formats.
bool known_role(const std::string& role) {
  return role == "system" || role == "developer" || role == "user" || role == "assistant" || role == "tool";
}

void check_messages(const nlohmann::ordered_json& messages, const std::string& where, bool need_assistant) {
  if (!messages.is_array())
    throw data::DataError(where + ": \"messages\" is not a list (expected [{\"role\": ..., \"content\": ...}, ...])");
  if (messages.empty()) throw data::DataError(where + ": the conversation is empty (\"messages\": [])");
  bool assistant = false;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const auto& m = messages[i];
    const std::string at = where + ": messages[" + std::to_string(i) + "]";
    if (!m.is_object()) throw data::DataError(at + " is not an object with \"role\" and \"content\"");
    if (!m.contains("role") || !m["role"].is_string()) throw data::DataError(at + ": \"role\" is missing or not a string");
    if (!m.contains("content") || !m["content"].is_string())
      throw data::DataError(at + ": \"content\" is missing or not a string");
    const std::string role = m["role"].get<std::string>();
    if (!known_role(role))
      throw data::DataError(at + ": unknown role \"" + role + "\" (system, developer, user, assistant or tool)");
    assistant = assistant || role == "assistant";
  }
  if (need_assistant && !assistant)
    throw data::DataError(where + ": the conversation has no assistant turn, and the loss is on the assistant's "
                                  "turns (--train-on all puts it on every token)");
}

// The text with the target tokens' runs in [[ ]], each run decoded whole.
std::string mark_targets(const text::Tokenizer& tok, const text::ChatTokens& t, bool all) {
  std::string out;
  for (std::size_t k = 0; k < t.ids.size();) {
    std::size_t end = k;
    while (end < t.ids.size() && (all || t.target[end]) == (all || t.target[k])) ++end;
    const std::string piece = tok.decode(std::vector<int32_t>(t.ids.begin() + k, t.ids.begin() + end));
    out += (all || t.target[k]) ? "[[" + piece + "]]" : piece;
    k = end;
  }
  return out;
}

}  // namespace

ChatDocument chat_document(const nlohmann::ordered_json& messages, const std::string& where,
                           const text::Tokenizer& tok, const ChatData& chat) {
  check_messages(messages, where, !chat.train_on_all);
  if (!chat.chat && !chat.template_error.empty()) throw data::DataError(where + ": " + chat.template_error);
  if (!chat.chat)
    throw data::DataError(where + ": \"messages\" data needs a chat template, and " + chat.model +
                          " has none (no chat_template.jinja, no chat_template in tokenizer_config.json): give one "
                          "with --chat-template FILE");
  text::ChatTokens t;
  try {
    t = text::tokenize_chat(*chat.chat, tok, messages.dump(), false, !chat.train_on_all);
  } catch (const ConfigError& e) {
    throw data::DataError(where + ": " + e.what());
  }
  if (!chat.train_on_all && std::count(t.target.begin(), t.target.end(), uint8_t(1)) == 0)
    throw data::DataError(where + ": the assistant's turns give no tokens to learn");
  ChatDocument doc;
  doc.from_generation_markers = t.from_generation_markers;
  for (std::size_t k = 0; k < t.ids.size(); ++k)
    doc.tokens.push_back(uint32_t(t.ids[k]) | (chat.train_on_all || t.target[k] ? 0 : data::kNotTarget));
  doc.marked = mark_targets(tok, t, chat.train_on_all);
  return doc;
}

}  // namespace vkamp::app
