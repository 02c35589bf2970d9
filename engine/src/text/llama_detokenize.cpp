#include "llama_detokenize.hpp"

#include <cstdlib>

#include "byte_level.hpp"
#include "unicode.hpp"

namespace vkamp::text {
namespace {

// "<0x41>" -> 0x41 (llama.cpp reads the two hex digits of a byte token).
char byte_of(const std::string& token) {
  if (token.size() < 5) return 0;
  return static_cast<char>(std::strtol(token.substr(3, 2).c_str(), nullptr, 16));
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size()) s.replace(at, from.size(), to);
  return s;
}

// llama.cpp's three passes over the bytes, in place as it makes them (a
// pass reads bytes it may have rewritten): no space before ? ! . , ;
// " ' " becomes "'"; no space before 's 'm 're 've.
std::string clean_up(std::string t) {
  std::size_t n = t.size(), total = n ? 1 : 0;
  for (std::size_t i = 1; i < n; ++i) {
    const char x = t[i];
    if (t[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) --total;
    t[total++] = x;
  }
  n = total, total = n ? 1 : 0;
  for (std::size_t i = 1; i < n; ++i) {
    const char x = t[i];
    if (x == '\'' && i + 1 < n && t[i - 1] == ' ' && t[i + 1] == ' ') {
      --total;
      t[++i] = '\0';
    }
    t[total++] = x;
  }
  n = total, total = n ? 1 : 0;
  for (std::size_t i = 1; i < n; ++i) {
    const char x = t[i];
    if (t[i - 1] == ' ' && x == '\'' && i + 1 < n) {
      const char x1 = t[i + 1];
      if (x1 == 's' || x1 == 'm') --total;
      else if (i + 2 < n && ((x1 == 'r' && t[i + 2] == 'e') || (x1 == 'v' && t[i + 2] == 'e'))) --total;
    }
    t[total++] = x;
  }
  t.resize(total);
  return t;
}

}  // namespace

std::string LlamaDetokenizer::operator()(const std::vector<int32_t>& ids, bool skip_special) const {
  std::string text;
  bool remove_space = add_space_prefix;
  for (int32_t id : ids) {
    const GgufTokenType type = types[id];
    const std::string& token = tokens[id];
    std::string piece;
    if (type == GgufTokenType::control || type == GgufTokenType::unknown || type == GgufTokenType::user_defined) {
      if (!(skip_special && type != GgufTokenType::user_defined)) piece = token;
    } else if (type == GgufTokenType::normal) {
      if (sentencepiece) {
        piece = replace_all(token, "\xE2\x96\x81", " ");
      } else {
        for (char32_t c : decode_utf8(token)) {
          if (const auto b = code_point_to_byte(c)) piece += static_cast<char>(*b);
          else append_utf8(piece, c);
        }
      }
    } else if (type == GgufTokenType::byte) {
      piece = std::string(1, byte_of(token));
    }  // unused and undefined types: nothing
    if (remove_space && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
    remove_space = false;
    text += piece;
  }
  if (clean_spaces) text = clean_up(text);
  return encode_utf8(decode_utf8(text));
}

}  // namespace vkamp::text
