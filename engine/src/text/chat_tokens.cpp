// A model folder's chat template, and a conversation's ids and targets as
// transformers and TRL make them (vkamp/text/chat_tokens.hpp).
#include "vkamp/text/chat_tokens.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "vkamp/io/gguf.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::text {
namespace {

using ordered = nlohmann::ordered_json;

std::optional<std::string> read_if_there(const std::string& path) {
  const std::filesystem::path p = platform::path_from_utf8(path);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p, ec)) return std::nullopt;
  std::ifstream in(p, std::ios::binary);
  if (!in) throw ChatTemplateError(path + ": cannot be opened");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A special token's text: a string, or an AddedToken object's "content".
std::optional<std::string> token_text(const ordered& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object() && j.contains("content") && j["content"].is_string()) return j["content"].get<std::string>();
  return std::nullopt;
}

// tokenizer_config.json's chat_template: a string, or [{name, template}...] of which "default".
std::optional<std::string> config_template(const ordered& config, const std::string& label) {
  if (!config.contains("chat_template") || config["chat_template"].is_null()) return std::nullopt;
  const ordered& t = config["chat_template"];
  if (t.is_string()) return t.get<std::string>();
  if (t.is_array()) {
    for (const auto& named : t)
      if (named.is_object() && named.value("name", "") == "default" && named.contains("template") &&
          named["template"].is_string())
        return named["template"].get<std::string>();
    throw ChatTemplateError(label + ": chat_template: several templates and none named \"default\" (give one with --chat-template FILE)");
  }
  throw ChatTemplateError(label + ": chat_template: expected a string or a list of {name, template}");
}

}  // namespace

namespace {

// A GGUF file's template (tokenizer.chat_template, as llama.cpp reads it)
// and its BOS and EOS tokens' text for the template's bos_token/eos_token.
std::optional<ModelChat> load_gguf_chat(const std::string& path, const std::string& template_file) {
  io::GgufFile f = [&] {
    try {
      return io::GgufFile::open(path);
    } catch (const io::FormatError& e) {
      throw ChatTemplateError(e.what());
    }
  }();
  std::optional<std::string> source;
  std::string name;
  try {
    if (!template_file.empty()) {
      source = read_if_there(template_file);
      if (!source) throw ChatTemplateError(template_file + ": no such file (the chat template)");
      name = template_file;
    } else if ((source = f.optional_string("tokenizer.chat_template"))) {
      name = path + " (tokenizer.chat_template)";
    } else {
      return std::nullopt;
    }
    ModelChat chat{ChatTemplate::parse(*source, name), {}};
    const std::vector<std::string> tokens = f.strings("tokenizer.ggml.tokens");
    for (const auto& [key, id_key] : {std::pair{"bos_token", "tokenizer.ggml.bos_token_id"},
                                      std::pair{"eos_token", "tokenizer.ggml.eos_token_id"}})
      if (const auto id = f.optional_unsigned(id_key); id && *id < tokens.size())
        chat.variables.special_tokens[key] = tokens[size_t(*id)];
    return chat;
  } catch (const io::FormatError& e) {
    throw ChatTemplateError(e.what());
  }
}

}  // namespace

std::optional<ModelChat> load_model_chat(const std::string& folder, const std::string& template_file) {
  if (io::is_gguf_path(folder)) return load_gguf_chat(folder, template_file);
  const std::string slash = folder.empty() || folder.back() == '/' ? "" : "/";
  const std::string config_label = folder + slash + "tokenizer_config.json";
  ordered config = ordered::object();
  if (const auto text = read_if_there(config_label)) {
    try {
      config = ordered::parse(*text);
    } catch (const nlohmann::json::exception& e) {
      throw ChatTemplateError(config_label + ": not valid JSON (" + e.what() + ")");
    }
  }
  std::optional<std::string> source;
  std::string name;
  if (!template_file.empty()) {
    source = read_if_there(template_file);
    if (!source) throw ChatTemplateError(template_file + ": no such file (the chat template)");
    name = template_file;
  } else if ((source = read_if_there(folder + slash + "chat_template.jinja"))) {
    name = folder + slash + "chat_template.jinja";  // transformers prefers it to the config's
  } else if ((source = config_template(config, config_label))) {
    name = config_label + " (chat_template)";
  } else {
    return std::nullopt;
  }
  ModelChat chat{ChatTemplate::parse(*source, name), {}};
  for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token"})
    if (config.contains(key))
      if (const auto t = token_text(config[key])) chat.variables.special_tokens[key] = *t;
  if (config.contains("additional_special_tokens") && config["additional_special_tokens"].is_array()) {
    ordered extra = ordered::array();
    for (const auto& t : config["additional_special_tokens"])
      if (const auto s = token_text(t)) extra.push_back(*s);
    chat.variables.more_json = ordered{{"additional_special_tokens", extra}}.dump();
  }
  return chat;
}

ModelChat require_model_chat(const std::string& model, const std::string& template_file) {
  if (auto chat = load_model_chat(model, template_file)) return std::move(*chat);
  throw ChatTemplateError(model + ": the model has no chat template (a folder's chat_template.jinja or "
                          "tokenizer_config.json \"chat_template\", a GGUF file's tokenizer.chat_template); give "
                          "one with --chat-template FILE");
}

namespace {

bool starts_with(const std::vector<int32_t>& ids, const std::vector<int32_t>& prefix) {
  return prefix.size() <= ids.size() && std::equal(prefix.begin(), prefix.end(), ids.begin());
}

// The number of ids that cover text[:bytes] exactly: the ids of the prefix
// text, which must begin the whole text's ids (a span on a token boundary).
std::size_t boundary(const Tokenizer& tok, const std::vector<int32_t>& ids, const std::string& text, std::size_t bytes,
                     const std::string& what) {
  const std::vector<int32_t> prefix = tok.encode(std::string_view(text).substr(0, bytes), false);
  if (!starts_with(ids, prefix))
    throw ChatTemplateError(what + " does not fall on a token boundary of the rendered conversation (byte " +
                            std::to_string(bytes) + "), so its tokens cannot be told apart");
  return prefix.size();
}

}  // namespace

ChatTokens tokenize_chat(const ModelChat& chat, const Tokenizer& tokenizer, const std::string& messages_json,
                         bool add_generation_prompt, bool find_targets) {
  ChatVariables vars = chat.variables;
  vars.add_generation_prompt = add_generation_prompt;
  const ChatRender whole = chat.chat_template.render_json(messages_json, vars);
  ChatTokens out;
  out.text = whole.text;
  out.ids = tokenizer.encode(whole.text, false);  // apply_chat_template: add_special_tokens=False
  out.target.assign(out.ids.size(), 0);
  auto mark = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < out.target.size(); ++k) out.target[k] = 1;
  };
  if (!find_targets) return out;
  if (chat.chat_template.has_generation_markers()) {
    out.from_generation_markers = true;
    for (const auto& [a, b] : whole.generation_spans)
      if (b > a) mark(boundary(tokenizer, out.ids, out.text, a, "a {% generation %} span's start"),
                      boundary(tokenizer, out.ids, out.text, b, "a {% generation %} span's end"));
    return out;
  }
  const ordered messages = ordered::parse(messages_json);
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (!messages[i].is_object() || messages[i].value("role", "") != "assistant") continue;
    const ordered before(messages.begin(), messages.begin() + static_cast<std::ptrdiff_t>(i));
    const ordered through(messages.begin(), messages.begin() + static_cast<std::ptrdiff_t>(i + 1));
    vars.add_generation_prompt = true;
    const std::vector<int32_t> prompt = tokenizer.encode(chat.chat_template.render_json(before.dump(), vars).text, false);
    vars.add_generation_prompt = false;
    const std::vector<int32_t> turn = tokenizer.encode(chat.chat_template.render_json(through.dump(), vars).text, false);
    const std::string which = "assistant message " + std::to_string(i + 1);
    if (!starts_with(out.ids, prompt) || !starts_with(turn, prompt) || !starts_with(out.ids, turn))
      throw ChatTemplateError("chat template " + chat.chat_template.name() + ": the rendering up to " + which +
                              " is not a beginning of the whole conversation's, so its tokens cannot be told apart "
                              "(a template with {% generation %} markers would say where they are)");
    mark(prompt.size(), turn.size());
  }
  return out;
}

std::optional<int32_t> end_of_turn_token(const ModelChat& chat, const Tokenizer& tokenizer) {
  const std::string marker = "vkamp-end-of-turn-probe";
  const ordered probe = ordered::array({{{"role", "user"}, {"content", "?"}}, {{"role", "assistant"}, {"content", marker}}});
  std::string text;
  try {
    text = chat.chat_template.render_json(probe.dump(), chat.variables).text;
  } catch (const ChatTemplateError&) {
    return std::nullopt;
  }
  const std::size_t at = text.rfind(marker);
  if (at == std::string::npos) return std::nullopt;
  const std::vector<int32_t> after = tokenizer.encode(text.substr(at + marker.size()), false);
  if (after.empty() || !tokenizer.decode({after[0]}, /*skip_special=*/true).empty()) return std::nullopt;
  return after[0];
}

}  // namespace vkamp::text
