// Tokenizer::from_gguf against llama.cpp's own cases: for each vocabulary
// of tests/text/fixtures/gguf (llama.cpp's models/ggml-vocab-*.gguf, gzip'd,
// with its .inp/.out pairs, README.md there), every case's ids as
// llama.cpp's test-tokenizer-0 expects them (no BOS, special tokens not
// parsed: the cases hold none, which the test checks); the ids and decoded
// text llama.cpp gives for texts with special tokens and random texts
// (make_gguf_fixtures.mjs); then the GGUF files vkamp refuses, each naming
// the file and the key.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/gguf_writer.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_paths.hpp"
#include "vkamp/io/gguf.hpp"
#include "vkamp/text/tokenizer.hpp"

namespace {

using vkamp::io::GgufFile;
using vkamp::test::GgufWriter;
using vkamp::text::Tokenizer;
using vkamp::text::TokenizerError;

std::string fixture(const std::string& name) {
  return VKAMP_TEST_DIR(VKAMP_TEXT_FIXTURES) + "/gguf/" + name;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The gzip'd fixture NAME.gz, decompressed.
std::string gunzip(const std::string& name) {
  gzFile in = gzopen(fixture(name + ".gz").c_str(), "rb");
  if (!in) throw std::runtime_error("cannot open " + fixture(name + ".gz"));
  std::string out;
  char buf[1 << 16];
  for (int n; (n = gzread(in, buf, sizeof buf)) > 0;) out.append(buf, std::size_t(n));
  gzclose(in);
  return out;
}

struct Case {
  std::string text;
  std::vector<int32_t> ids;
};

// llama.cpp's test-tokenizer-0 format: the .inp's cases separated by
// "\n__ggml_vocab_test__\n", the .out's ids one line a case.
std::vector<Case> read_cases(const std::string& vocab) {
  const std::string inp = read(fixture(vocab + ".inp"));
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<Case> cases;
  for (std::size_t pos = 0; pos < inp.size();) {
    const std::size_t next = inp.find(sep, pos);
    cases.push_back({inp.substr(pos, next == std::string::npos ? std::string::npos : next - pos), {}});
    if (next == std::string::npos) break;
    pos = next + sep.size();
  }
  std::istringstream out(read(fixture(vocab + ".out")));
  std::string line;
  for (std::size_t i = 0; std::getline(out, line); ++i) {
    if (i >= cases.size()) throw std::runtime_error(vocab + ".out has more lines than cases");
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) cases[i].ids.push_back(id);
  }
  return cases;
}

std::string printable(const std::string& s) { return nlohmann::json(s).dump(); }

// The fixture's vocabulary, decompressed into `dir` and opened.
GgufFile open_vocab(const vkamp::test::ScratchDir& dir, const std::string& vocab) {
  const std::string name = "ggml-vocab-" + vocab + ".gguf";
  return GgufFile::open(dir.write(name, gunzip(name)));
}

class LlamaCppVocab : public ::testing::TestWithParam<std::string> {};

TEST_P(LlamaCppVocab, EncodesEveryCaseAsLlamaCpp) {
  const vkamp::test::ScratchDir dir;
  const std::string name = "ggml-vocab-" + GetParam() + ".gguf";
  const GgufFile file = open_vocab(dir, GetParam());
  const Tokenizer tok = Tokenizer::from_gguf(file);
  // The cases' ids do not depend on parse_special: no control or unknown token's text is in them.
  const std::vector<std::string> tokens = file.strings("tokenizer.ggml.tokens");
  const std::vector<double> types = file.numbers("tokenizer.ggml.token_type");
  const std::vector<Case> cases = read_cases(name);
  ASSERT_GE(cases.size(), 46u);  // 46 in each, 50 in qwen35's
  for (const Case& c : cases) {
    SCOPED_TRACE("text " + printable(c.text));
    for (std::size_t i = 0; i < tokens.size(); ++i)
      if (types[i] == 2 || types[i] == 3) {
        ASSERT_EQ(c.text.find(tokens[i]), std::string::npos) << tokens[i];
      }
    EXPECT_EQ(tok.encode(c.text, false), c.ids);
  }
}

TEST_P(LlamaCppVocab, EncodesSpecialTokensAndDecodesAsLlamaCpp) {
  const vkamp::test::ScratchDir dir;
  const Tokenizer tok = Tokenizer::from_gguf(open_vocab(dir, GetParam()));
  const nlohmann::json all = nlohmann::json::parse(read(fixture("llama_cpp.json")));
  const nlohmann::json& cases = all.at(GetParam());
  ASSERT_GT(cases.size(), 50u);
  for (const nlohmann::json& c : cases) {
    const std::string text = c["text"];
    SCOPED_TRACE("text " + printable(text));
    const auto ids = c["ids"].get<std::vector<int32_t>>();
    EXPECT_EQ(tok.encode(text, false), ids);
    EXPECT_EQ(tok.decode(ids), c["decoded"].get<std::string>());
    EXPECT_EQ(tok.decode(ids, true), c["decoded_plain"].get<std::string>());
  }
}

INSTANTIATE_TEST_SUITE_P(TokenizerGguf, LlamaCppVocab,
                         ::testing::Values("llama-spm", "phi-3", "gpt-2", "llama-bpe", "qwen2", "starcoder", "qwen35"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s)
                             if (ch == '-') ch = '_';
                           return s;
                         });

// A SentencePiece vocabulary: <unk> <s> </s>, then `tokens` (normal unless
// `types` says), their scores; no space prefix, so the texts are what merges.
GgufWriter spm_vocab(const std::vector<std::string>& tokens, const std::vector<float>& scores,
                     const std::vector<int32_t>& types = {}) {
  std::vector<std::string> all = {"<unk>", "<s>", "</s>"};
  std::vector<float> s = {0, 0, 0};
  std::vector<int32_t> t = {2, 3, 3};
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    all.push_back(tokens[i]);
    s.push_back(scores[i]);
    t.push_back(types.empty() ? 1 : types[i]);
  }
  GgufWriter w;
  w.string("tokenizer.ggml.model", "llama").strings("tokenizer.ggml.tokens", all).f32s("tokenizer.ggml.scores", s);
  w.i32s("tokenizer.ggml.token_type", t).boolean("tokenizer.ggml.add_space_prefix", false);
  return w;
}

Tokenizer from_bytes(const vkamp::test::ScratchDir& dir, const std::string& bytes) {
  return Tokenizer::from_gguf(GgufFile::open(dir.write("t.gguf", bytes)));
}

// llama.cpp merges the pair whose token scores highest, the leftmost on a tie.
TEST(TokenizerGguf, SentencePieceMergesByScoreLeftmostOnATie) {
  const vkamp::test::ScratchDir dir;
  // ids: a 3, b 4, ab 5, ba 6
  EXPECT_EQ(from_bytes(dir, spm_vocab({"a", "b", "ab", "ba"}, {-5, -5, -1, -1}).bytes()).encode("aba", false),
            (std::vector<int32_t>{5, 3}));
  EXPECT_EQ(from_bytes(dir, spm_vocab({"a", "b", "ab", "ba"}, {-5, -5, -1, -0.5f}).bytes()).encode("aba", false),
            (std::vector<int32_t>{3, 6}));
}

// llama.cpp finds the longest special token everywhere first (Hugging Face
// would take "ab" at the first position), and adds BOS as the file says.
TEST(TokenizerGguf, SpecialTokensLongestFirstAndBos) {
  const vkamp::test::ScratchDir dir;
  GgufWriter w = spm_vocab({"a", "b", "c", "d", "ab", "bcd"}, {-1, -1, -1, -1, 0, 0}, {1, 1, 1, 1, 4, 4});
  w.boolean("tokenizer.ggml.add_bos_token", true);
  const Tokenizer tok = from_bytes(dir, w.bytes());
  EXPECT_EQ(tok.encode("abcd", false), (std::vector<int32_t>{3, 8}));
  EXPECT_EQ(tok.encode("<s>abcd", true), (std::vector<int32_t>{1, 1, 3, 8}));
  EXPECT_EQ(tok.bos_id(), 1);
  EXPECT_EQ(tok.eos_id(), 2);
  EXPECT_EQ(tok.decode({1, 3, 8}), "<s>abcd");
  EXPECT_EQ(tok.decode({1, 3, 8}, true), "abcd");
}

// What vkamp refuses: the message names the file and the key.
TEST(TokenizerGguf, BadMetadataNamesTheFileAndKey) {
  const vkamp::test::ScratchDir dir;
  const std::string path = dir.file("t.gguf");
  auto refused = [&](const GgufWriter& w, const std::string& key, const std::string& what) {
    SCOPED_TRACE(key + ": " + what);
    try {
      from_bytes(dir, w.bytes());
      ADD_FAILURE() << "accepted";
    } catch (const TokenizerError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(path), std::string::npos) << m;
      EXPECT_NE(m.find(key), std::string::npos) << m;
      EXPECT_NE(m.find(what), std::string::npos) << m;
    }
  };
  const std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "a"};
  refused(GgufWriter().strings("tokenizer.ggml.tokens", tokens), "tokenizer.ggml.model", "");
  refused(GgufWriter().string("tokenizer.ggml.model", "bert").strings("tokenizer.ggml.tokens", tokens),
          "tokenizer.ggml.model", "\"bert\" is not supported");
  refused(GgufWriter().string("tokenizer.ggml.model", "llama"), "tokenizer.ggml.tokens", "");
  refused(GgufWriter().string("tokenizer.ggml.model", "llama").f32s("tokenizer.ggml.tokens", {1, 2}),
          "tokenizer.ggml.tokens", "array of strings");
  refused(GgufWriter().string("tokenizer.ggml.model", "llama").strings("tokenizer.ggml.tokens", tokens)
              .f32s("tokenizer.ggml.scores", {0, 0, 0}),
          "tokenizer.ggml.scores", "holds 3 values for 4 tokens");
  refused(GgufWriter().string("tokenizer.ggml.model", "llama").strings("tokenizer.ggml.tokens", tokens)
              .i32s("tokenizer.ggml.token_type", {2, 3, 3, 1, 1}),
          "tokenizer.ggml.token_type", "holds 5 values for 4 tokens");
  refused(spm_vocab({"a"}, {std::nanf("")}), "tokenizer.ggml.scores", "token 3's score is NaN");
  refused(GgufWriter().string("tokenizer.ggml.model", "llama").strings("tokenizer.ggml.tokens", tokens)
              .f32s("tokenizer.ggml.token_type", {2, 3, 3, 1.5f}),
          "tokenizer.ggml.token_type", "token 3 has the type 1.5");
  refused(GgufWriter().string("tokenizer.ggml.model", "llama").strings("tokenizer.ggml.tokens", {"a", "b", "a"}),
          "tokenizer.ggml.tokens", "appears twice");
  const std::vector<std::string> bytes_vocab = {"a", "b", "ab"};
  refused(GgufWriter().string("tokenizer.ggml.model", "gpt2").strings("tokenizer.ggml.tokens", bytes_vocab)
              .string("tokenizer.ggml.pre", "qwen2"),
          "tokenizer.ggml.merges", "");
  refused(GgufWriter().string("tokenizer.ggml.model", "gpt2").strings("tokenizer.ggml.tokens", bytes_vocab)
              .strings("tokenizer.ggml.merges", {"a b"}).string("tokenizer.ggml.pre", "deepseek-llm"),
          "tokenizer.ggml.pre", "\"deepseek-llm\" is not supported");
  refused(GgufWriter().string("tokenizer.ggml.model", "gpt2").strings("tokenizer.ggml.tokens", bytes_vocab)
              .strings("tokenizer.ggml.merges", {"b a"}).string("tokenizer.ggml.pre", "gpt-2"),
          "tokenizer.ggml.merges", "\"ba\", which the vocabulary does not have");
  // An id outside the vocabulary leaves llama.cpp's default, for gpt2 11, outside it too.
  refused(GgufWriter().string("tokenizer.ggml.model", "gpt2").strings("tokenizer.ggml.tokens", bytes_vocab)
              .strings("tokenizer.ggml.merges", {"a b"}).string("tokenizer.ggml.pre", "gpt-2")
              .u32("tokenizer.ggml.bos_token_id", 3).boolean("tokenizer.ggml.add_bos_token", true),
          "tokenizer.ggml.add_bos_token", "no bos_token_id");
}

}  // namespace
