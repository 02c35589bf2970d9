// vkamp-tokenize: a Hugging Face model folder's tokenizer (tokenizer.json,
// vkamp/text/tokenizer.hpp), or a GGUF file's, as a filter: each line on stdin becomes its
// token ids, space-separated, on one line of stdout; with --decode, each
// line of ids becomes its text. With --chat FILE.json, one conversation
// rendered with the model's chat template: its text, --ids its ids, --mask
// which ids are the assistant's. No GPU: the tokenizer is host code.
// Exit status: 0, 1 (a runtime failure), 2 (bad flags, files or input).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "app/flags.hpp"
#include "app/tool_main.hpp"
#include "vkamp/config/setting.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/io/gguf.hpp"
#include "vkamp/platform.hpp"
#include "vkamp/platform/files.hpp"
#include "vkamp/text/chat_tokens.hpp"
#include "vkamp/text/tokenizer.hpp"

namespace {

using namespace vkamp;

const char* kAbout =
    "Tokenizes text as Hugging Face's tokenizers do, from a model folder's tokenizer.json (and\n"
    "tokenizer_config.json): byte-level BPE (GPT-2, Llama 3, Qwen2) and SentencePiece-style BPE\n"
    "(Llama 2, TinyLlama, Mistral); or, from a .gguf file, its tokenizer as llama.cpp tokenizes (SentencePiece\n"
    "and byte-level BPE models). Each line of standard input (without its \\n or \\r\\n) is printed as\n"
    "its token ids, space-separated, one line each; with --decode, each line of ids as its text.\n"
    "Special tokens written in the text (<s>, <|endoftext|>) become their ids. Input that is not\n"
    "UTF-8, or an id outside the vocabulary, stops with exit status 2 naming the line.\n"
    "With --chat FILE.json (a JSON list of {\"role\", \"content\"} messages), prints that conversation\n"
    "rendered with the model's chat template as transformers' apply_chat_template renders it, and\n"
    "nothing else; --ids prints its token ids instead (encoded without added special tokens, as\n"
    "transformers does), --mask a 0/1 per id marking the assistant's tokens (the loss's targets).";

const char* kTokenizeGroup = "Tokenizer";

struct Options {
  std::string model;
  bool decode = false;
  bool special = true;  // encode: the BOS/EOS the tokenizer adds; decode: the special tokens' text
  std::string chat;           // a conversation to render (a JSON file)
  std::string chat_template;  // a template file replacing the model's
  bool add_generation_prompt = false;
  bool ids = false;
  bool mask = false;
};

std::vector<app::Flag> flags_for(Options& o, const Options& defaults) {
  static const std::vector<config::Setting<Options>> rows = [] {
    auto model = config::text<Options>(
        "model", {kTokenizeGroup, "PATH", "a Hugging Face model folder with tokenizer.json, or a .gguf file"},
        VKAMP_FIELD(model), "required");
    model.check = [](const Options& o) {
      if (o.model.empty())
        throw ConfigError("--model PATH is required (a folder with tokenizer.json, or a .gguf file)");
    };
    auto decode = config::toggle<Options>(
        "decode", {kTokenizeGroup, "", "read lines of token ids and print their text"}, VKAMP_FIELD(decode));
    auto special = config::toggle<Options>(
        "special",
        {kTokenizeGroup, "",
         "no BOS/EOS added (those the tokenizer adds: BOS for Llama 2); with --decode, special tokens left out"},
        VKAMP_FIELD(special), "added", "none");
    special.help_shows_negation = true;
    auto chat = config::text<Options>(
        "chat", {kTokenizeGroup, "FILE.json", "render this conversation (a JSON list of messages) with the chat template"},
        VKAMP_FIELD(chat), "none");
    auto chat_template = config::text<Options>(
        "chat-template", {kTokenizeGroup, "FILE", "the chat template (Jinja) to use instead of the model's"},
        VKAMP_FIELD(chat_template), "the model's");
    auto generation_prompt = config::toggle<Options>(
        "add-generation-prompt", {kTokenizeGroup, "", "with --chat: end with the assistant's turn opening"},
        VKAMP_FIELD(add_generation_prompt));
    auto ids = config::toggle<Options>("ids", {kTokenizeGroup, "", "with --chat: print the token ids"}, VKAMP_FIELD(ids));
    auto mask = config::toggle<Options>(
        "mask", {kTokenizeGroup, "", "with --chat: print 0/1 per token id, 1 on the assistant's (trained) tokens"},
        VKAMP_FIELD(mask));
    return std::vector<config::Setting<Options>>{model, decode, special, chat, chat_template, generation_prompt, ids, mask};
  }();
  return app::bind_rows(rows, o, defaults);
}

// The ids of one line of --decode input; `where` names the line.
std::vector<int32_t> parse_ids(const std::string& line, const std::string& where) {
  std::vector<int32_t> ids;
  for (std::size_t i = 0; i < line.size();) {
    if (line[i] == ' ' || line[i] == '\t') {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    const std::string word = line.substr(i, end - i);
    char* stop = nullptr;
    const long long v = std::strtoll(word.c_str(), &stop, 10);
    if (*stop || word.empty() || word[0] == '+' || v < 0 || v > 0x7FFFFFFF)
      throw ConfigError(where + ": \"" + word + "\" is not a token id (expected integers from 0, space-separated)");
    ids.push_back(static_cast<int32_t>(v));
    i = end;
  }
  return ids;
}

// A path ending in .gguf is a GGUF file's tokenizer; anything else, a model folder.
text::Tokenizer load(const std::string& path) {
  if (io::is_gguf_path(path))
    return text::Tokenizer::from_gguf(io::GgufFile::open(path));
  return text::Tokenizer::load(path);
}

std::string read_conversation(const std::string& path) {
  std::FILE* f = platform::open_file(path, "rb");
  if (!f) throw ConfigError(path + ": cannot be opened (--chat names a JSON file with a list of messages)");
  std::string text;
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  return text;
}

// --chat: one conversation's text, ids or targets.
int run_chat(const Options& o, const text::Tokenizer& tok) {
  const text::ModelChat chat = text::require_model_chat(o.model, o.chat_template);
  const std::string messages = read_conversation(o.chat);
  std::string out;
  try {
    if (!o.ids && !o.mask) {
      text::ChatVariables vars = chat.variables;
      vars.add_generation_prompt = o.add_generation_prompt;
      out = chat.chat_template.render_json(messages, vars).text;
    } else {
      const text::ChatTokens t = text::tokenize_chat(chat, tok, messages, o.add_generation_prompt);
      auto line = [&](auto value) {
        std::string s;
        for (std::size_t k = 0; k < t.ids.size(); ++k) s += (k ? " " : "") + std::to_string(value(k));
        return s + "\n";
      };
      if (o.ids) out += line([&](std::size_t k) { return t.ids[k]; });
      if (o.mask) out += line([&](std::size_t k) { return int(t.target[k]); });
    }
  } catch (const text::ChatTemplateError& e) {
    throw ConfigError(o.chat + ": " + e.what());
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int run(const Options& o) {
  platform::binary_stdio();  // bytes in, bytes out: no CRLF translation of the UTF-8
  const text::Tokenizer tok = load(o.model);
  if (!o.chat.empty()) return run_chat(o, tok);
  if (o.ids || o.mask || o.add_generation_prompt || !o.chat_template.empty())
    throw ConfigError("--ids, --mask, --add-generation-prompt and --chat-template go with --chat FILE.json");
  std::string line;
  for (std::size_t n = 1; std::getline(std::cin, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = "standard input, line " + std::to_string(n);
    std::string out;
    try {
      if (o.decode) {
        out = tok.decode(parse_ids(line, where), !o.special);
      } else {
        for (int32_t id : tok.encode(line, o.special)) out += (out.empty() ? "" : " ") + std::to_string(id);
      }
    } catch (const text::TokenizerError& e) {
      throw ConfigError(where + ": " + e.what());
    }
    out += '\n';
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);  // a line at a time, for a program reading the other end
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  vkamp::platform::utf8_arguments(argc, argv);
  Options o;
  const Options defaults = o;
  const std::vector<app::Flag> flags = flags_for(o, defaults);
  const app::Program program{"vkamp-tokenize", "--model PATH [--decode] [--no-special] < lines | --model PATH --chat FILE.json [--add-generation-prompt] [--chat-template FILE] [--ids] [--mask]", kAbout, false, ""};
  if (int status = app::parse_or_exit(program, argc, argv, flags); status >= 0) return status;
  return app::tool_main("vkamp-tokenize", [&] { return run(o); });
}
