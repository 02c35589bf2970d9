#include "app/finetune_data.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "vkamp/data/data_error.hpp"
#include "vkamp/data/host_data.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::app {

namespace {

bool is_json_lines(const std::string& path) {
  const std::string tail = ".jsonl";
  return path.size() >= tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0;
}

// One document: its text, and for a prompt/completion line the prompt,
// which comes first and whose tokens are inputs but no targets.
struct Document {
  std::string prompt, text;
  bool has_prompt = false;
};

std::vector<int32_t> encode(const text::Tokenizer& tok, const std::string& text, const std::string& where) {
  try {
    return tok.encode(text, /*add_special=*/true);
  } catch (const text::TokenizerError& e) {
    throw data::DataError(where + ": " + e.what());
  }
}

// The document's tokens and EOS after them. With a prompt, the split is
// found as TRL's SFTTrainer finds it: prompt + completion is encoded whole
// (a token may span the seam), and its first tokens, as many as the prompt
// alone encodes to (less an EOS the tokenizer appends), are the prompt's.
void append_document(std::vector<uint32_t>& tokens, const text::Tokenizer& tok, const Document& doc,
                       const std::string& where) {
  const std::vector<int32_t> ids = encode(tok, doc.prompt + doc.text, where);
  size_t prompt = 0;
  if (doc.has_prompt) {
    const std::vector<int32_t> alone = encode(tok, doc.prompt, where);
    prompt = alone.size();
    if (prompt && tok.eos_id() && alone.back() == *tok.eos_id() && !ids.empty() && ids.back() == *tok.eos_id()) --prompt;
    if (prompt >= ids.size()) throw data::DataError(where + ": the completion is empty (it gives no tokens to learn)");
  }
  for (size_t i = 0; i < ids.size(); ++i) tokens.push_back(uint32_t(ids[i]) | (i < prompt ? data::kNotTarget : 0));
  if (tok.eos_id()) tokens.push_back(uint32_t(*tok.eos_id()));
}

std::string string_field(const nlohmann::ordered_json& j, const char* key, const std::string& where) {
  if (!j[key].is_string()) throw data::DataError(where + ": \"" + key + "\" is not a string");
  return j[key].get<std::string>();
}

// A line as JSON (its objects' keys in order: a chat template may read them so).
nlohmann::ordered_json parse_line(const std::string& line, const std::string& where) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(line);
  } catch (const nlohmann::json::exception&) {
    throw data::DataError(where + ": not JSON (each line of a .jsonl file is one object)");
  }
  if (!j.is_object()) throw data::DataError(where + ": not a JSON object");
  if (j.contains("messages") && (j.contains("text") || j.contains("prompt") || j.contains("completion")))
    throw data::DataError(where + ": has \"messages\" and \"text\" or \"prompt\"/\"completion\": give one or the other");
  return j;
}

Document document_of_line(const nlohmann::ordered_json& j, const std::string& where) {
  if (j.contains("text")) {
    if (j.contains("prompt") || j.contains("completion"))
      throw data::DataError(where + ": has \"text\" and \"prompt\"/\"completion\": give one or the other");
    return {"", string_field(j, "text", where), false};
  }
  if (j.contains("prompt") && j.contains("completion"))
    return {string_field(j, "prompt", where), string_field(j, "completion", where), true};
  if (j.contains("prompt") || j.contains("completion"))
    throw data::DataError(where + ": has \"" + std::string(j.contains("prompt") ? "prompt" : "completion") +
                          "\" without \"" + (j.contains("prompt") ? "completion" : "prompt") + "\"");
  throw data::DataError(where + ": has neither \"text\", \"prompt\" and \"completion\", nor \"messages\"");
}

bool is_target(uint32_t token) { return !(token & data::kNotTarget); }

}  // namespace

FineTuneText load_finetune_text(const std::string& path, const text::Tokenizer& tok, double val_fraction,
                                uint32_t seq_len, const ChatData& chat) {
  std::ifstream in(platform::path_from_utf8(path), std::ios::binary);
  if (!in) throw data::DataError(path + ": cannot open");
  FineTuneText t;
  t.source = path;
  std::vector<uint32_t> tokens;
  if (is_json_lines(path)) {
    std::string line;
    for (size_t n = 1; std::getline(in, line); ++n) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      const std::string where = path + ":" + std::to_string(n);
      const nlohmann::ordered_json j = parse_line(line, where);
      ++t.documents;
      if (!j.contains("messages")) {
        append_document(tokens, tok, document_of_line(j, where), where);
        continue;
      }
      // A conversation: the template writes its BOS and ends of turn; no EOS is added (as TRL adds none).
      const ChatDocument doc = chat_document(j["messages"], where, tok, chat);
      tokens.insert(tokens.end(), doc.tokens.begin(), doc.tokens.end());
      if (t.conversations++ == 0)
        t.sample = where + " as the model reads it, the loss on [[ ]] (" +
                   (chat.train_on_all ? std::string("--train-on all")
                    : doc.from_generation_markers ? "the assistant's turns: the template's {% generation %} spans"
                                                  : "the assistant's turns: found by rendering the conversation's beginnings, as TRL does") +
                   "):\n" + doc.marked;
    }
  } else {
    std::ostringstream all;
    all << in.rdbuf();
    append_document(tokens, tok, {"", all.str(), false}, path);
    t.documents = 1;
  }
  const size_t split = size_t(double(tokens.size()) * (1 - val_fraction));
  t.train.assign(tokens.begin(), tokens.begin() + split);
  t.val.assign(tokens.begin() + split, tokens.end());
  for (auto [part, p] : {std::pair{"training", &t.train}, std::pair{"validation", &t.val}}) {
    if (p->size() < size_t(seq_len) + 1)
      throw data::DataError(path + ": the " + std::string(part) + " part has " + std::to_string(p->size()) +
                            " tokens, fewer than a sequence of " + std::to_string(seq_len + 1) +
                            " (a longer text, a shorter --seq-len or another --val-fraction)");
    // A window's first token is never a label, so the targets counted are those after the first.
    if (std::count_if(p->begin() + 1, p->end(), is_target) == 0)
      throw data::DataError(path + ": the " + std::string(part) + " part has no completion tokens to learn or score");
  }
  t.targets = size_t(std::count_if(tokens.begin() + 1, tokens.end(), is_target));
  return t;
}

}  // namespace vkamp::app
