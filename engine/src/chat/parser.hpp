// jinja2's parser over the lexer's pieces: parse_expression reads one tag's
// tokens, parse_template the statements. Errors throw RenderError with the
// line; a construct vkamp does not implement says so by name.
#pragma once
#include <string>
#include <vector>

#include "ast.hpp"
#include "lexer.hpp"

namespace vkamp::chat {

class TokenStream {
 public:
  TokenStream(const std::vector<Token>& tokens, int line) : tokens_(tokens), line_(line) {}
  bool at_end() const { return pos_ >= tokens_.size(); }
  const Token* peek(std::size_t ahead = 0) const {
    return pos_ + ahead < tokens_.size() ? &tokens_[pos_ + ahead] : nullptr;
  }
  bool is_op(const char* op, std::size_t ahead = 0) const;
  bool is_name(const char* name, std::size_t ahead = 0) const;
  bool skip_op(const char* op);
  bool skip_name(const char* name);
  const Token& next();
  void expect_op(const char* op);
  std::string expect_name();
  void expect_end() const;
  int line() const { return line_; }
  [[noreturn]] void error(const std::string& what) const;

 private:
  const std::vector<Token>& tokens_;
  std::size_t pos_ = 0;
  int line_;
};

// Expressions: jinja2's parse_expression, parse_tuple (a, b) and the
// primary-with-postfix form a for loop's target takes.
ExprPtr parse_expression(TokenStream& ts, bool with_condition = true);
ExprPtr parse_tuple(TokenStream& ts, bool with_condition = true);
ExprPtr parse_filter_chain(TokenStream& ts, ExprPtr node);

// The whole template. Throws RenderError naming the line and construct.
Body parse_template(const std::vector<Piece>& pieces);

// Whether vkamp implements the jinja2 filter / test / method by that name;
// the parser refuses jinja2 builtins it does not implement. Names jinja2
// lacks too fail when rendered, where jinja2 fails.
bool known_filter(const std::string& name);
bool jinja_builtin_filter(const std::string& name);
bool known_test(const std::string& name);
bool jinja_builtin_test(const std::string& name);
bool known_method(const std::string& name);

}  // namespace vkamp::chat
