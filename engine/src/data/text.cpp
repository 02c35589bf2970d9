#include "vkamp/data/text.hpp"

#include <array>

#include "file_bytes.hpp"
#include "vkamp/data/data_error.hpp"

namespace vkamp::data {
namespace {

std::string byte_text(unsigned char c) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  s += digits[c >> 4];
  s += digits[c & 15];
  if (c >= 0x20 && c < 0x7f) s += std::string(" ('") + char(c) + "')";
  return s;
}

}  // namespace

TextTokens tokenize(const std::string& text, const std::string& vocab) {
  // Byte -> id; -1 marks a byte the vocabulary lacks.
  std::array<int32_t, 256> id_of;
  id_of.fill(-1);
  for (size_t i = 0; i < vocab.size(); ++i) id_of[static_cast<unsigned char>(vocab[i])] = int32_t(i);
  TextTokens out{vocab, {}};
  out.tokens.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const int32_t id = id_of[static_cast<unsigned char>(text[i])];
    if (id < 0)
      throw DataError("text: byte " + std::to_string(i) + ": " +
                             byte_text(static_cast<unsigned char>(text[i])) + " is not in the vocabulary of " +
                             std::to_string(vocab.size()) + " characters");
    out.tokens.push_back(uint32_t(id));
  }
  return out;
}

TextTokens tokens_of(const std::string& text) {
  std::array<bool, 256> seen{};
  for (char c : text) seen[static_cast<unsigned char>(c)] = true;
  std::string vocab;
  for (int b = 0; b < 256; ++b)
    if (seen[b]) vocab += static_cast<char>(b);
  return tokenize(text, vocab);
}

TextTokens read_text_tokens(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  if (bytes.empty()) throw DataError(path + ": the file is empty; a text to train on is expected");
  return tokens_of(std::string(bytes.begin(), bytes.end()));
}

}  // namespace vkamp::data
