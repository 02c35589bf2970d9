// Tokenizer::from_gguf: the tokenizer a GGUF file carries in its metadata
// (tokenizer.ggml.*), built into the same Impl as tokenizer.json's, with
// llama.cpp's choices where the two differ: its order of splitting out
// special tokens, its SentencePiece merging (spm.hpp), its pre-tokenizers
// by name (gguf_pre_tokenizers.hpp) and its detokenizer
// (llama_detokenize.hpp). Ids equal llama.cpp's llama_tokenize with
// parse_special true (tests/text/test_tokenizer_gguf.cpp checks its own
// vocabularies' cases).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_set>

#include "gguf_pre_tokenizers.hpp"
#include "llama_detokenize.hpp"
#include "spm.hpp"
#include "tokenizer_impl.hpp"
#include "unicode.hpp"
#include "vkamp/io/gguf.hpp"

namespace vkamp::text {
namespace {

const std::string kKey = "tokenizer.ggml.";

// Token texts llama.cpp's loader makes control tokens whatever the file
// says: its end-of-generation names (which hold its end-of-turn ones)...
const std::vector<std::string> kEndOfGeneration = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>", "[e~["};
// ... and, for each fill-in-the-middle role the file gives no id for
// (keys here without "tokenizer.ggml."), its names. (Where a vocabulary
// holds two names of one role, llama.cpp promotes one of them, which one
// its hash map's order decides; vkamp promotes both.)
struct FimRole {
  std::vector<std::string> keys, names;
};
const std::vector<FimRole> kFillInTheMiddle = {
    {{"fim_pre_token_id", "prefix_token_id"},
     {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>", "<PRE>",
      "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>"}},
    {{"fim_suf_token_id", "suffix_token_id"},
     {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81hole\xEF\xBD\x9C>", "<SUF>",
      "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>"}},
    {{"fim_mid_token_id", "middle_token_id"},
     {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>", "<MID>",
      "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>"}},
    {{"fim_pad_token_id"}, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}},
    {{"fim_rep_token_id"}, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}},
    {{"fim_sep_token_id"}, {"<|file_sep|>"}},
};
// ... and user-defined ones (gpt-oss's, always rendered).
const std::vector<std::string> kUserDefinedByName = {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"};

struct Metadata {
  const io::GgufFile& file;
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw TokenizerError(file.path() + ": " + kKey + key + ": " + what);
  }
  // The reader's FormatError (a missing key, another type) as a TokenizerError.
  template <typename F>
  auto read(F f) const -> decltype(f()) {
    try {
      return f();
    } catch (const io::FormatError& e) {
      throw TokenizerError(e.what());
    }
  }
  std::vector<double> same_length(const std::string& key, std::size_t n) const {
    if (!file.find(kKey + key)) return {};
    std::vector<double> v = read([&] { return file.numbers(kKey + key); });
    if (v.size() != n)
      fail(key, "holds " + std::to_string(v.size()) + " values for " + std::to_string(n) + " tokens (one a token)");
    return v;
  }
  std::optional<int32_t> id(const std::string& key, std::optional<int32_t> fallback, std::size_t n) const {
    const auto v = read([&] { return file.optional_unsigned(kKey + key); });
    if (v && *v < n) return static_cast<int32_t>(*v);  // llama.cpp keeps its default for an id out of range
    if (fallback && std::size_t(*fallback) >= n) return std::nullopt;
    return fallback;
  }
};

std::vector<GgufTokenType> token_types(const Metadata& m, const std::vector<std::string>& tokens) {
  const std::vector<double> raw = m.same_length("token_type", tokens.size());
  std::vector<GgufTokenType> types(tokens.size(), GgufTokenType::normal);
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const double t = raw[i];
    if (t != std::floor(t)) m.fail("token_type", "token " + std::to_string(i) + " has the type " + std::to_string(t));
    types[i] = t >= 1 && t <= 6 ? static_cast<GgufTokenType>(int(t)) : GgufTokenType::undefined;
  }
  std::unordered_set<std::string> control(kEndOfGeneration.begin(), kEndOfGeneration.end());
  for (const FimRole& role : kFillInTheMiddle) {
    bool named = false;
    for (const std::string& key : role.keys) named = named || m.id(key, std::nullopt, tokens.size());
    if (!named) control.insert(role.names.begin(), role.names.end());
  }
  const std::unordered_set<std::string> user_defined(kUserDefinedByName.begin(), kUserDefinedByName.end());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (control.count(tokens[i])) types[i] = GgufTokenType::control;
    if (user_defined.count(tokens[i])) types[i] = GgufTokenType::user_defined;
  }
  return types;
}

bool splits_out(GgufTokenType t) {
  return t == GgufTokenType::control || t == GgufTokenType::user_defined || t == GgufTokenType::unknown;
}

// The special tokens, found in the text before the model runs. Phi-3's
// files get llama.cpp's by-name rule: whitespace after them is dropped.
void add_special_tokens(Tokenizer::Impl& impl, const Metadata& m, const std::vector<std::string>& tokens,
                        const std::vector<GgufTokenType>& types) {
  std::string name = m.read([&] { return m.file.optional_string("general.name"); }).value_or("");
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  const bool phi3 = name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (!splits_out(types[i])) continue;
    AddedToken a;
    a.id = static_cast<int32_t>(i);
    a.content = decode_utf8(tokens[i]);
    a.special = types[i] != GgufTokenType::user_defined;
    a.rstrip = phi3 && tokens[i] != "<unk>" && tokens[i] != "<s>" && tokens[i] != "<|endoftext|>";
    impl.added.push_back(std::move(a));
  }
  impl.raw_splitter = std::make_unique<AddedTokenSplitter>(impl.added, false, SplitOrder::longest_token_first);
  impl.normalized_splitter = std::make_unique<AddedTokenSplitter>(impl.added, true, SplitOrder::longest_token_first);
}

std::unique_ptr<WordModel> gpt2_model(Tokenizer::Impl& impl, const Metadata& m,
                                      std::unordered_map<std::string, int32_t> vocab, bool& clean_spaces,
                                      bool& add_bos) {
  const std::string pre_name = m.read([&] { return m.file.optional_string(kKey + "pre"); }).value_or("default");
  const GgufPreTokenizer* pre = gguf_pre_tokenizer(pre_name);
  if (!pre)
    m.fail("pre", "the pre-tokenizer \"" + pre_name + "\" is not supported by vkamp (it knows " +
                      gguf_pre_tokenizer_names() + ")");
  clean_spaces = pre->clean_spaces;
  add_bos = pre->add_bos;
  // The expressions in turn, then GPT-2's byte alphabet, as pre_tokenizer.cpp builds them from tokenizer.json.
  json steps = json::array();
  for (const std::string& r : pre->regexes)
    steps.push_back({{"type", "Split"}, {"pattern", {{"Regex", r}}}, {"behavior", "Isolated"}});
  steps.push_back({{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}});
  impl.pre_tokenizer = pre_tokenizer_steps({{"type", "Sequence"}, {"pretokenizers", steps}},
                                           Where{m.file.path(), kKey + "pre (" + pre_name + ")"});
  std::vector<std::pair<std::string, std::string>> merges;
  for (const std::string& s : m.read([&] { return m.file.strings(kKey + "merges"); })) {
    const std::size_t space = s.find(' ', 1);  // as llama.cpp splits them: a merge may start with a space
    if (space == std::string::npos) continue;  // llama.cpp's ("", "") pair, which never applies
    merges.emplace_back(s.substr(0, space), s.substr(space + 1));
  }
  BpeOptions o;
  o.ignore_merges = pre->ignore_merges;
  try {
    return std::make_unique<Bpe>(std::move(vocab), std::move(merges), o);
  } catch (const std::invalid_argument& e) {
    m.fail("merges", e.what());
  }
}

}  // namespace

Tokenizer Tokenizer::from_gguf(const io::GgufFile& file) {
  const Metadata m{file};
  auto impl = std::make_unique<Impl>();
  impl->label = file.path();
  const std::string model = m.read([&] { return file.string(kKey + "model"); });
  if (model != "llama" && model != "gpt2")
    m.fail("model", "the tokenizer model \"" + model +
                        "\" is not supported by vkamp (it reads llama, SentencePiece, and gpt2, byte-level BPE)");
  const bool spm = model == "llama";
  std::vector<std::string> tokens = m.read([&] { return file.strings(kKey + "tokens"); });
  if (tokens.empty()) m.fail("tokens", "is empty");
  if (tokens.size() > std::size_t(std::numeric_limits<int32_t>::max())) m.fail("tokens", "has too many tokens");
  const std::vector<double> scores = m.same_length("scores", tokens.size());
  std::unordered_map<std::string, int32_t> vocab;
  vocab.reserve(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].empty()) tokens[i] = "[EMPTY_" + std::to_string(i) + "]";  // llama.cpp's name for it
    if (first_invalid_utf8(tokens[i]) != std::string::npos)
      m.fail("tokens", "token " + std::to_string(i) + " is not valid UTF-8");
    if (!vocab.emplace(tokens[i], static_cast<int32_t>(i)).second)
      m.fail("tokens", "token " + std::to_string(i) + " (\"" + tokens[i] + "\") appears twice");
  }
  const std::vector<GgufTokenType> types = token_types(m, tokens);
  add_special_tokens(*impl, m, tokens, types);

  bool clean_spaces = false, add_bos = true;
  if (spm) {
    std::vector<float> s(tokens.size(), 0.0f);
    for (std::size_t i = 0; i < scores.size(); ++i) {
      s[i] = static_cast<float>(scores[i]);
      if (std::isnan(s[i])) m.fail("scores", "token " + std::to_string(i) + "'s score is NaN");  // no order
    }
    impl->model = std::make_unique<Spm>(std::move(vocab), std::move(s));
  } else {
    impl->model = gpt2_model(*impl, m, std::move(vocab), clean_spaces, add_bos);
  }
  // SentencePiece's text: a space before each stretch between special
  // tokens (add_space_prefix), and every space as U+2581.
  const bool space_prefix = m.read([&] { return file.optional_bool(kKey + "add_space_prefix"); }).value_or(spm);
  if (spm)
    impl->normalizer.push_back([space_prefix](std::u32string& s) {
      if (space_prefix && !s.empty()) s.insert(0, 1, U' ');
      std::replace(s.begin(), s.end(), U' ', U'\u2581');
    });

  const std::size_t n = tokens.size();
  impl->bos = m.id("bos_token_id", spm ? 1 : 11, n);  // llama.cpp's defaults
  impl->eos = m.id("eos_token_id", spm ? 2 : 11, n);
  add_bos = m.read([&] { return file.optional_bool(kKey + "add_bos_token"); }).value_or(add_bos);
  const bool add_eos = m.read([&] { return file.optional_bool(kKey + "add_eos_token"); }).value_or(false);
  if (add_bos && !impl->bos) m.fail("add_bos_token", "true, but there is no bos_token_id");
  if (add_eos && !impl->eos) m.fail("add_eos_token", "true, but there is no eos_token_id");
  if (add_bos) impl->single_template.push_back({{*impl->bos}});
  if (add_bos || add_eos) impl->single_template.push_back({});
  if (add_eos) impl->single_template.push_back({{*impl->eos}});

  impl->id_to_token = tokens;
  impl->id_known.assign(n, true);
  impl->id_is_special.assign(n, false);
  for (const AddedToken& a : impl->added) {
    impl->id_is_special[a.id] = a.special;
    impl->added_ids.emplace(tokens[a.id], a.id);
  }
  auto detokenize = std::make_shared<LlamaDetokenizer>();
  detokenize->sentencepiece = spm;
  detokenize->add_space_prefix = space_prefix;
  detokenize->clean_spaces = clean_spaces;
  detokenize->tokens = std::move(tokens);
  detokenize->types = types;
  impl->detokenize = [detokenize](const std::vector<int32_t>& ids, bool skip) { return (*detokenize)(ids, skip); };
  return Tokenizer(std::move(impl));
}

}  // namespace vkamp::text
