// Text as tokens: the vocabulary is the sorted distinct bytes, every byte
// maps back to itself, and a byte outside a given vocabulary is an error.
#include "vkamp/data/text.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "data/data_files.hpp"
#include "support/numerics.hpp"

namespace {

using vkamp::test::data_rejected;

TEST(Text, RandomBytesRoundTrip) {
  std::mt19937_64& rng = vkamp::test::rng();  // seeded per test; VKAMP_TEST_SEED replays
  std::string text(1 + rng() % 5000, '\0');
  const unsigned alphabet = 1 + unsigned(rng() % 256);
  for (char& c : text) c = char(rng() % alphabet);
  vkamp::test::ScratchDir dir;
  const vkamp::data::TextTokens t = vkamp::data::read_text_tokens(dir.write("t.txt", text));

  std::string distinct = text;
  std::sort(distinct.begin(), distinct.end(), [](char a, char b) { return uint8_t(a) < uint8_t(b); });
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  EXPECT_EQ(t.vocab, distinct);
  ASSERT_EQ(t.tokens.size(), text.size());
  for (size_t i = 0; i < text.size(); ++i) ASSERT_EQ(t.vocab[t.tokens[i]], text[i]) << i;
}

TEST(Text, TokenizeInAGivenVocabulary) {
  const vkamp::data::TextTokens t = vkamp::data::tokenize("abba c", " abc");
  EXPECT_EQ(t.tokens, (std::vector<uint32_t>{1, 2, 2, 1, 0, 3}));
  EXPECT_EQ(t.vocab, " abc");
  EXPECT_TRUE(data_rejected([] { vkamp::data::tokenize("abXa", "ab"); }, "byte 2:", "0x58 ('X') is not in the vocabulary"));
}

TEST(Text, EmptyFileIsAnError) {
  vkamp::test::ScratchDir dir;
  const std::string path = dir.write("empty.txt", std::string());
  EXPECT_TRUE(data_rejected([&] { vkamp::data::read_text_tokens(path); }, path, "empty"));
  EXPECT_TRUE(data_rejected([] { vkamp::data::read_text_tokens("/nonexistent/t.txt"); }, "/nonexistent/t.txt",
                            "cannot open"));
}

}  // namespace
