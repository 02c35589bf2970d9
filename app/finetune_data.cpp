#include "app/finetune_data.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "vkamp/data/data_error.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::app {

namespace {

bool is_json_lines(const std::string& path) {
  const std::string tail = ".jsonl";
  return path.size() >= tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0;
}

void append_document(std::vector<uint32_t>& tokens, const text::Tokenizer& tok, const std::string& text,
                     const std::string& where) {
  std::vector<int32_t> ids;
  try {
    ids = tok.encode(text, /*add_special=*/true);
  } catch (const text::TokenizerError& e) {
    throw data::DataError(where + ": " + e.what());
  }
  for (int32_t id : ids) tokens.push_back(uint32_t(id));
  if (tok.eos_id()) tokens.push_back(uint32_t(*tok.eos_id()));
}

std::string text_of_line(const std::string& line, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception&) {
    throw data::DataError(where + ": not JSON (each line of a .jsonl file is one object)");
  }
  if (!j.is_object()) throw data::DataError(where + ": not a JSON object");
  if (j.contains("text")) {
    if (!j["text"].is_string()) throw data::DataError(where + ": \"text\" is not a string");
    return j["text"].get<std::string>();
  }
  if (j.contains("prompt") || j.contains("completion"))
    throw data::DataError(where + ": prompt/completion lines (a loss on the completion alone) are not supported yet; "
                                  "give {\"text\": ...}");
  throw data::DataError(where + ": has neither \"text\" nor \"prompt\" and \"completion\"");
}

}  // namespace

FineTuneText load_finetune_text(const std::string& path, const text::Tokenizer& tok, double val_fraction,
                                uint32_t seq_len) {
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
      append_document(tokens, tok, text_of_line(line, where), where);
      ++t.documents;
    }
  } else {
    std::ostringstream all;
    all << in.rdbuf();
    append_document(tokens, tok, all.str(), path);
    t.documents = 1;
  }
  const size_t split = size_t(double(tokens.size()) * (1 - val_fraction));
  t.train.assign(tokens.begin(), tokens.begin() + split);
  t.val.assign(tokens.begin() + split, tokens.end());
  for (auto [part, n] : {std::pair{"training", t.train.size()}, std::pair{"validation", t.val.size()}})
    if (n < size_t(seq_len) + 1)
      throw data::DataError(path + ": the " + std::string(part) + " part has " + std::to_string(n) +
                            " tokens, fewer than a sequence of " + std::to_string(seq_len + 1) +
                            " (a longer text, a shorter --seq-len or another --val-fraction)");
  return t;
}

}  // namespace vkamp::app
