// What the tokenizer refuses: files it cannot read, malformed fields (named
// by file and path), and components it does not implement (named), each a
// TokenizerError, so the programs exit 2.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "vkamp/text/tokenizer.hpp"

namespace {

using nlohmann::json;
using vkamp::text::Tokenizer;
using vkamp::text::TokenizerError;

// A small byte-level BPE file: "a b" -> "ab".
json small_file() {
  json vocab = json::object();
  vocab["a"] = 0;
  vocab["b"] = 1;
  vocab["ab"] = 2;
  vocab["\xC4\xA0"] = 3;  // "Ġ", the space
  return {{"added_tokens", json::array()},
          {"normalizer", nullptr},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
          {"post_processor", nullptr},
          {"decoder", {{"type", "ByteLevel"}}},
          {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"a b"}}}}};
}

// The message of the TokenizerError that loading `file` throws ("" if none).
std::string refusal(const json& file, const std::string& config = "") {
  try {
    Tokenizer::from_json(file.dump(), config, "model/tokenizer.json");
  } catch (const TokenizerError& e) {
    return e.what();
  }
  return "";
}

void expect_mentions(const std::string& message, std::initializer_list<const char*> words) {
  EXPECT_FALSE(message.empty()) << "nothing was refused";
  for (const char* w : words) EXPECT_NE(message.find(w), std::string::npos) << message << "\n  lacks: " << w;
}

TEST(TokenizerErrors, TheSmallFileWorks) {
  const Tokenizer tok = Tokenizer::from_json(small_file().dump(), "", "small");
  EXPECT_EQ(tok.encode("ab ab ba"), (std::vector<int32_t>{2, 3, 2, 3, 1, 0}));
  EXPECT_EQ(tok.decode({2, 3, 1}), "ab b");
}

TEST(TokenizerErrors, NamesTheFolderOrFile) {
  const auto dir = std::filesystem::temp_directory_path() / "vkamp_tokenizer_errors";
  std::filesystem::remove_all(dir);
  try {
    Tokenizer::load(dir.string());
    ADD_FAILURE();
  } catch (const TokenizerError& e) {
    expect_mentions(e.what(), {"vkamp_tokenizer_errors", "not a folder"});
  }
  std::filesystem::create_directories(dir);
  try {
    Tokenizer::load(dir.string());
    ADD_FAILURE();
  } catch (const TokenizerError& e) {
    expect_mentions(e.what(), {"tokenizer.json", "no such file"});
  }
  std::ofstream(dir / "tokenizer.json") << "{\"model\": [1, 2";
  try {
    Tokenizer::load(dir.string());
    ADD_FAILURE();
  } catch (const TokenizerError& e) {
    expect_mentions(e.what(), {"tokenizer.json", "not valid JSON"});
  }
  std::ofstream(dir / "tokenizer.json") << small_file().dump();
  std::ofstream(dir / "tokenizer_config.json") << "{\"add_bos_token\": \"yes\"}";
  try {
    Tokenizer::load(dir.string());
    ADD_FAILURE();
  } catch (const TokenizerError& e) {
    expect_mentions(e.what(), {"tokenizer_config.json", "add_bos_token", "true or false"});
  }
  std::filesystem::remove_all(dir);
}

TEST(TokenizerErrors, NamesMalformedFields) {
  json f = small_file();
  f["model"]["merges"] = {"a b", "ab"};
  expect_mentions(refusal(f), {"model/tokenizer.json", "model.merges[1]", "LEFT RIGHT"});
  f = small_file();
  f["model"]["merges"] = {"b a"};
  expect_mentions(refusal(f), {"merge 0", "\"ba\"", "vocabulary does not have"});
  f = small_file();
  f["model"]["vocab"]["a"] = -4;
  expect_mentions(refusal(f), {"model.vocab.a", "token id"});
  f = small_file();
  f.erase("model");
  expect_mentions(refusal(f), {"model", "missing"});
  f = small_file();
  f["added_tokens"] = {{{"id", 9}}};
  expect_mentions(refusal(f), {"added_tokens[0].content", "missing"});
  f = small_file();
  f["model"]["unk_token"] = "<unk>";
  expect_mentions(refusal(f), {"unk_token", "<unk>", "not in the vocabulary"});
  expect_mentions(refusal(small_file(), "{\"bos_token\": \"<s>\"}"), {"bos_token", "<s>"});
}

TEST(TokenizerErrors, NamesUnsupportedComponents) {
  json f = small_file();
  f["model"]["type"] = "Unigram";
  expect_mentions(refusal(f), {"model.type", "\"Unigram\"", "BPE"});
  f = small_file();
  f["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}, {{"type", "NFKC"}}}}};
  expect_mentions(refusal(f), {"normalizer.normalizers[1]", "normalizer \"NFKC\""});
  f = small_file();
  f["pre_tokenizer"] = {{"type", "Whitespace"}};
  expect_mentions(refusal(f), {"pre_tokenizer", "pre-tokenizer \"Whitespace\""});
  f = small_file();
  f["decoder"] = {{"type", "WordPiece"}};
  expect_mentions(refusal(f), {"decoder", "decoder \"WordPiece\""});
  f = small_file();
  f["post_processor"] = {{"type", "RobertaProcessing"}};
  expect_mentions(refusal(f), {"post_processor", "\"RobertaProcessing\""});
  f = small_file();
  f["model"]["dropout"] = 0.1;
  expect_mentions(refusal(f), {"model.dropout", "dropout"});
  f = small_file();
  f["pre_tokenizer"] = {{"type", "Metaspace"}, {"split", true}};
  expect_mentions(refusal(f), {"pre_tokenizer.split", "split"});
  f = small_file();
  f["added_tokens"] = {{{"id", 4}, {"content", "<x>"}, {"single_word", true}}};
  expect_mentions(refusal(f), {"added_tokens[0].single_word"});
}

// Pattern constructs outside the subset are refused by name, never
// matched some other way.
TEST(TokenizerErrors, NamesUnsupportedPatternConstructs) {
  const std::pair<const char*, const char*> kCases[] = {
      {"\\bword", "escape '\\b'"},           {"(?<=a)b", "lookbehind"},
      {"^a", "anchor"},                      {"a++", "possessive"},
      {"(?>a)", "atomic"},                   {"[[:alpha:]]", "nested class"},
      {"\\p{Greek}", "\\p{Greek}"},          {"(a", "without its ')'"},
      {"[a-", "without its ']'"},            {"(a)\\1", "escape '\\1'"},
      {"[a&&b]", "intersection"},            {"a{3,1}", "m < n"},
  };
  for (const auto& [pattern, what] : kCases) {
    json f = small_file();
    f["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}};
    SCOPED_TRACE(pattern);
    expect_mentions(refusal(f), {"pre_tokenizer.pattern.Regex", what});
  }
  json f = small_file();
  f["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "a"}}}, {"behavior", "MergedWithNext"}};
  expect_mentions(refusal(f), {"behavior", "MergedWithNext"});
}

// The subset's semantics where the fixtures' patterns do not reach: lazy
// quantifiers, bounded repeats, lookahead, case folding, classes.
TEST(TokenizerErrors, SplitPatternsMatchAsOniguruma) {
  auto pieces = [](const std::string& regex, const std::string& text) {
    json f = small_file();
    for (char c = ' '; c <= '~'; ++c) f["model"]["vocab"][std::string(1, c)] = 100 + c;
    f["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Removed"}};
    f["decoder"] = nullptr;  // tokens joined by spaces
    f["model"]["merges"] = json::array();
    const Tokenizer tok = Tokenizer::from_json(f.dump(), "", "split");
    return tok.decode(tok.encode(text));
  };
  EXPECT_EQ(pieces("<.+?>", "a<b>c<d>e"), "a c e");  // lazy: the shortest tag
  EXPECT_EQ(pieces("<.+>", "a<b>c<d>e"), "a e");     // greedy: the longest
  EXPECT_EQ(pieces("x{2}", "axxxb"), "a x b");     // exactly two
  EXPECT_EQ(pieces("(?i:ab)", "1aB2Ab3"), "1 2 3");
  EXPECT_EQ(pieces("a(?=b)", "aab"), "a b");       // only the a before b
  EXPECT_EQ(pieces("a(?!b)", "aab"), "a b");       // only the a not before b
  EXPECT_EQ(pieces("[^a-c\\d]", "a1z2b"), "a 1 2 b");
  EXPECT_EQ(pieces("(?:ab|a)c", "xacyabcz"), "x y z");
}

}  // namespace
