// A template's source cut into text and tags as jinja2's lexer cuts it with
// trim_blocks and lstrip_blocks (transformers' settings): newlines made \n,
// one trailing newline dropped, {%- -%} {{- -}} stripping, the newline after
// a block or comment tag dropped, and the spaces before a block tag that
// starts its line dropped. Comments vanish.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vkamp::chat {

struct Token {
  enum class Type { Name, String, Integer, Float, Operator };
  Type type;
  std::string text;  // the name, the operator, or the string's decoded value
  int64_t integer = 0;
  double real = 0;
};

struct Piece {
  enum class Type { Text, Print, Statement };  // text, {{ ... }}, {% ... %}
  Type type;
  std::string text;           // Text
  std::vector<Token> tokens;  // Print and Statement
  int line = 1;
};

// Throws RenderError ("line N: ...") on an unterminated tag or a bad token;
// the caller names the template.
std::vector<Piece> lex_template(const std::string& source);

}  // namespace vkamp::chat
