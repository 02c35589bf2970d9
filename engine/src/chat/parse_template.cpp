// jinja2's statements: if/elif/else, for (with a filter and else), set
// (names, tuples, namespace attributes, blocks), macro, break/continue
// (the loopcontrols extension), filter blocks and transformers'
// {% generation %}. Any other statement is refused by name.
#include "parser.hpp"

namespace vkamp::chat {
namespace {

struct TemplateParser {
  const std::vector<Piece>& pieces;
  std::size_t at = 0;

  // The statements up to one whose keyword is in `ends` (left unread at
  // `at`), or to the end of the template where `ends` is empty.
  Body parse_body(std::initializer_list<const char*> ends) {
    Body body;
    for (; at < pieces.size(); ++at) {
      const Piece& piece = pieces[at];
      if (piece.type == Piece::Type::Text) {
        Node n{Node::Type::Text};
        n.text = piece.text;
        n.line = piece.line;
        body.push_back(std::move(n));
        continue;
      }
      TokenStream ts(piece.tokens, piece.line);
      if (piece.type == Piece::Type::Print) {
        Node n{Node::Type::Print};
        n.line = piece.line;
        n.expr = parse_tuple(ts);
        ts.expect_end();
        body.push_back(std::move(n));
        continue;
      }
      const std::string keyword = ts.expect_name();
      for (const char* end : ends)
        if (keyword == end) return body;
      body.push_back(parse_statement(keyword, ts, ends));
    }
    if (ends.size() != 0) {
      std::string expected;
      for (const char* e : ends) expected += std::string(expected.empty() ? "" : " or ") + "{% " + e + " %}";
      fail("unexpected end of template: expected " + expected);
    }
    return body;
  }

  void expect_end_tag(const char* keyword) {
    TokenStream ts(pieces[at].tokens, pieces[at].line);
    if (ts.expect_name() != keyword) ts.error(std::string("expected {% ") + keyword + " %}");
    ts.expect_end();
  }

  Node parse_if(TokenStream& ts, int line) {
    Node n{Node::Type::If};
    n.line = line;
    n.expr = parse_tuple(ts);
    ts.expect_end();
    ++at;
    n.body = parse_body({"elif", "else", "endif"});
    TokenStream end(pieces[at].tokens, pieces[at].line);
    const std::string keyword = end.expect_name();
    if (keyword == "elif") {
      n.orelse.push_back(parse_if(end, pieces[at].line));
      return n;  // the nested if read up to and including the endif
    }
    if (keyword == "else") {
      end.expect_end();
      ++at;
      n.orelse = parse_body({"endif"});
    }
    expect_end_tag("endif");
    return n;
  }

  Node parse_statement(const std::string& keyword, TokenStream& ts, std::initializer_list<const char*> /*ends*/) {
    const int line = ts.line();
    if (keyword == "if") return parse_if(ts, line);
    Node n;
    n.line = line;
    if (keyword == "for") {
      n.type = Node::Type::For;
      do n.targets.push_back(ts.expect_name());
      while (ts.skip_op(","));
      if (!ts.skip_name("in")) ts.error("expected 'in' in a for loop");
      n.expr = parse_tuple(ts, false);
      if (ts.skip_name("if")) n.condition = parse_expression(ts);
      if (ts.is_name("recursive")) ts.error("recursive for loops are not supported by vkamp's renderer");
      ts.expect_end();
      ++at;
      n.body = parse_body({"else", "endfor"});
      TokenStream end(pieces[at].tokens, pieces[at].line);
      if (end.expect_name() == "else") {
        ++at;
        n.orelse = parse_body({"endfor"});
      }
      expect_end_tag("endfor");
    } else if (keyword == "set") {
      n.targets.push_back(ts.expect_name());
      if (ts.skip_op(".")) {
        n.attribute_target = true;
        n.targets.push_back(ts.expect_name());
      } else {
        while (ts.skip_op(",")) n.targets.push_back(ts.expect_name());
      }
      if (ts.skip_op("=")) {
        n.type = Node::Type::Set;
        n.expr = parse_tuple(ts);
        ts.expect_end();
      } else {
        if (n.targets.size() != 1 || n.attribute_target) ts.error("a {% set %} block sets one name");
        if (ts.is_op("|")) ts.error("filtered {% set %} blocks are not supported by vkamp's renderer");
        ts.expect_end();
        n.type = Node::Type::SetBlock;
        ++at;
        n.body = parse_body({"endset"});
        expect_end_tag("endset");
      }
    } else if (keyword == "macro") {
      n.type = Node::Type::Macro;
      n.text = ts.expect_name();
      ts.expect_op("(");
      while (!ts.skip_op(")")) {
        if (!n.params.empty()) ts.expect_op(",");
        if (ts.skip_op(")")) break;
        n.params.push_back(ts.expect_name());
        n.defaults.push_back(ts.skip_op("=") ? parse_expression(ts) : nullptr);
      }
      ts.expect_end();
      ++at;
      n.body = parse_body({"endmacro"});
    } else if (keyword == "break" || keyword == "continue") {
      n.type = keyword == "break" ? Node::Type::Break : Node::Type::Continue;
      ts.expect_end();
    } else if (keyword == "generation") {
      n.type = Node::Type::Generation;
      ts.expect_end();
      ++at;
      n.body = parse_body({"endgeneration"});
    } else if (keyword == "filter") {
      n.type = Node::Type::FilterBlock;
      // "{% filter name(args) | more %}": a chain applied to the body's text.
      std::vector<Token> piped{{Token::Type::Operator, "|"}};
      for (std::size_t k = 0; ts.peek(k); ++k) piped.push_back(*ts.peek(k));
      TokenStream chain(piped, line);
      n.expr = parse_filter_chain(chain, nullptr);
      chain.expect_end();
      ++at;
      n.body = parse_body({"endfilter"});
    } else {
      ts.error("the statement {% " + keyword + " %} is not supported by vkamp's renderer");
    }
    return n;
  }
};

}  // namespace

Body parse_template(const std::vector<Piece>& pieces) {
  TemplateParser parser{pieces};
  Body body = parser.parse_body({});
  return body;
}

}  // namespace vkamp::chat
