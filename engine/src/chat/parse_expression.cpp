// jinja2's expression grammar (parser.py), lowest precedence first:
// condition, or, and, not, comparisons and in, + -, ~, * / // %, **, unary
// - +, then a primary with its postfixes (.a [i] (args)) and filters/tests.
#include <cstring>

#include "parser.hpp"

namespace vkamp::chat {

bool TokenStream::is_op(const char* op, std::size_t ahead) const {
  const Token* t = peek(ahead);
  return t && t->type == Token::Type::Operator && t->text == op;
}
bool TokenStream::is_name(const char* name, std::size_t ahead) const {
  const Token* t = peek(ahead);
  return t && t->type == Token::Type::Name && t->text == name;
}
bool TokenStream::skip_op(const char* op) {
  if (!is_op(op)) return false;
  ++pos_;
  return true;
}
bool TokenStream::skip_name(const char* name) {
  if (!is_name(name)) return false;
  ++pos_;
  return true;
}
const Token& TokenStream::next() {
  if (at_end()) error("unexpected end of tag");
  return tokens_[pos_++];
}
void TokenStream::expect_op(const char* op) {
  if (!skip_op(op)) error(std::string("expected '") + op + "'" + (at_end() ? " at the end of the tag" : ", found '" + peek()->text + "'"));
}
std::string TokenStream::expect_name() {
  if (at_end() || peek()->type != Token::Type::Name) error("expected a name");
  return tokens_[pos_++].text;
}
void TokenStream::expect_end() const {
  if (!at_end()) error("unexpected '" + peek()->text + "'");
}
void TokenStream::error(const std::string& what) const { fail("line " + std::to_string(line_) + ": " + what); }

namespace {

ExprPtr make(Expr::Type type, int line, std::vector<ExprPtr> items = {}, std::string name = {}) {
  auto e = std::make_shared<Expr>();
  e->type = type;
  e->line = line;
  e->items = std::move(items);
  e->name = std::move(name);
  return e;
}

ExprPtr parse_unary(TokenStream& ts, bool with_filter);
ExprPtr parse_postfix(TokenStream& ts, ExprPtr node);

// (args, name=value) after the '(' has been read; into e's items (after
// those already there) and keywords.
void parse_call_args(TokenStream& ts, Expr& e) {
  bool first = true;
  while (!ts.skip_op(")")) {
    if (!first) {
      ts.expect_op(",");
      if (ts.skip_op(")")) break;
    }
    first = false;
    if (ts.is_op("*") || ts.is_op("**")) ts.error("*args and **kwargs in calls are not supported by vkamp's renderer");
    const Token* t = ts.peek();
    if (t && t->type == Token::Type::Name && ts.is_op("=", 1)) {
      std::string key = ts.next().text;
      ts.next();
      e.keywords.emplace_back(std::move(key), parse_expression(ts));
    } else {
      if (!e.keywords.empty()) ts.error("a positional argument after a keyword argument");
      e.items.push_back(parse_expression(ts));
    }
  }
}

ExprPtr parse_primary(TokenStream& ts) {
  const int line = ts.line();
  const Token& t = ts.next();
  auto literal = [&](Value v) {
    auto e = make(Expr::Type::Literal, line);
    e->value = std::move(v);
    return e;
  };
  switch (t.type) {
    case Token::Type::Name:
      if (t.text == "true" || t.text == "True") return literal(Value::boolean(true));
      if (t.text == "false" || t.text == "False") return literal(Value::boolean(false));
      if (t.text == "none" || t.text == "None") return literal(Value::none());
      return make(Expr::Type::Name, line, {}, t.text);
    case Token::Type::String: {
      std::string s = t.text;  // adjacent strings join, as in Python
      while (ts.peek() && ts.peek()->type == Token::Type::String) s += ts.next().text;
      return literal(Value::string(std::move(s)));
    }
    case Token::Type::Integer: return literal(Value::integer(t.integer));
    case Token::Type::Float: return literal(Value::real(t.real));
    case Token::Type::Operator: break;
  }
  if (t.text == "(") {
    if (ts.skip_op(")")) return make(Expr::Type::Tuple, line);
    ExprPtr inner = parse_tuple(ts);
    ts.expect_op(")");
    return inner;
  }
  if (t.text == "[") {
    auto e = make(Expr::Type::List, line);
    while (!ts.skip_op("]")) {
      if (!e->items.empty()) ts.expect_op(",");
      if (ts.skip_op("]")) break;
      e->items.push_back(parse_expression(ts));
    }
    return e;
  }
  if (t.text == "{") {
    auto e = make(Expr::Type::Dict, line);
    while (!ts.skip_op("}")) {
      if (!e->items.empty()) ts.expect_op(",");
      if (ts.skip_op("}")) break;
      e->items.push_back(parse_expression(ts));
      ts.expect_op(":");
      e->items.push_back(parse_expression(ts));
    }
    return e;
  }
  ts.error("unexpected '" + t.text + "'");
}

ExprPtr parse_subscript(TokenStream& ts, ExprPtr node) {
  const int line = ts.line();
  if (ts.skip_op(".")) {
    const Token& t = ts.next();
    if (t.type == Token::Type::Name) return make(Expr::Type::Getattr, line, {node}, t.text);
    if (t.type != Token::Type::Integer) ts.error("expected a name or number after '.'");
    auto index = make(Expr::Type::Literal, line);
    index->value = Value::integer(t.integer);
    return make(Expr::Type::Getitem, line, {node, index});
  }
  ts.expect_op("[");
  // One subscript or slice: jinja2 also takes a tuple of them, which no template uses.
  ExprPtr parts[3];
  int colons = 0;
  while (!ts.is_op("]")) {
    if (ts.skip_op(":")) {
      if (++colons > 2) ts.error("too many ':' in a slice");
      continue;
    }
    if (parts[colons]) ts.error("expected ':' or ']' in a subscript");
    parts[colons] = parse_expression(ts);
  }
  ts.expect_op("]");
  if (colons == 0) {
    if (!parts[0]) ts.error("empty subscript");
    return make(Expr::Type::Getitem, line, {node, parts[0]});
  }
  return make(Expr::Type::Slice, line, {node, parts[0], parts[1], parts[2]});
}

ExprPtr parse_postfix(TokenStream& ts, ExprPtr node) {
  for (;;) {
    if (ts.is_op(".") || ts.is_op("[")) {
      node = parse_subscript(ts, node);
    } else if (ts.skip_op("(")) {
      if (node->type == Expr::Type::Getattr && !known_method(node->name))
        ts.error("the method ." + node->name + "() is not supported by vkamp's renderer");
      auto call = make(Expr::Type::Call, node->line, {node});
      parse_call_args(ts, *call);
      node = call;
    } else {
      return node;
    }
  }
}

ExprPtr parse_test(TokenStream& ts, ExprPtr node) {
  auto test = make(Expr::Type::Test, ts.line(), {node});
  test->negated = ts.skip_name("not");
  test->name = ts.expect_name();
  if (ts.is_op(".")) ts.error("dotted test names are not supported by vkamp's renderer");
  if (!known_test(test->name) && jinja_builtin_test(test->name))
    ts.error("the test '" + test->name + "' is not supported by vkamp's renderer");
  const Token* t = ts.peek();
  if (ts.skip_op("(")) {
    parse_call_args(ts, *test);
  } else if (t && (t->type != Token::Type::Operator || t->text == "[" || t->text == "{") &&
             !ts.is_name("else") && !ts.is_name("or") && !ts.is_name("and")) {
    if (ts.is_name("is")) ts.error("You cannot chain multiple tests with is");
    test->items.push_back(parse_postfix(ts, parse_primary(ts)));
  }
  return test;
}

}  // namespace

ExprPtr parse_filter_chain(TokenStream& ts, ExprPtr node) {
  for (;;) {
    if (ts.skip_op("|")) {
      auto filter = make(Expr::Type::Filter, ts.line(), {node});
      filter->name = ts.expect_name();
      if (ts.is_op(".")) ts.error("dotted filter names are not supported by vkamp's renderer");
      if (!known_filter(filter->name) && jinja_builtin_filter(filter->name))
        ts.error("the filter '" + filter->name + "' is not supported by vkamp's renderer");
      if (ts.skip_op("(")) parse_call_args(ts, *filter);
      node = filter;
    } else if (ts.skip_name("is")) {
      node = parse_test(ts, node);
    } else if (ts.skip_op("(")) {
      auto call = make(Expr::Type::Call, node->line, {node});
      parse_call_args(ts, *call);
      node = call;
    } else {
      return node;
    }
  }
}

namespace {

ExprPtr parse_unary(TokenStream& ts, bool with_filter) {
  const int line = ts.line();
  ExprPtr node;
  if (ts.skip_op("-")) node = make(Expr::Type::Negate, line, {parse_unary(ts, false)});
  else if (ts.skip_op("+")) node = make(Expr::Type::Plus, line, {parse_unary(ts, false)});
  else node = parse_primary(ts);
  node = parse_postfix(ts, node);
  return with_filter ? parse_filter_chain(ts, node) : node;
}

// One level of left-associative binary operators.
template <typename Next>
ExprPtr binary_level(TokenStream& ts, std::initializer_list<const char*> ops, Next next) {
  ExprPtr left = next(ts);
  for (;;) {
    const char* found = nullptr;
    for (const char* op : ops)
      if (ts.is_op(op)) found = op;
    if (!found) return left;
    ts.next();
    left = make(Expr::Type::Binary, left->line, {left, next(ts)}, found);
  }
}

ExprPtr parse_pow(TokenStream& ts) {
  return binary_level(ts, {"**"}, [](TokenStream& s) { return parse_unary(s, true); });
}
ExprPtr parse_math2(TokenStream& ts) { return binary_level(ts, {"*", "/", "//", "%"}, parse_pow); }
ExprPtr parse_concat(TokenStream& ts) { return binary_level(ts, {"~"}, parse_math2); }
ExprPtr parse_math1(TokenStream& ts) { return binary_level(ts, {"+", "-"}, parse_concat); }

ExprPtr parse_compare(TokenStream& ts) {
  ExprPtr first = parse_math1(ts);
  auto cmp = make(Expr::Type::Compare, first->line, {first});
  for (;;) {
    static const char* const ops[] = {"==", "!=", "<", ">", "<=", ">="};
    std::string op;
    for (const char* o : ops)
      if (ts.is_op(o)) op = o;
    if (!op.empty()) ts.next();
    else if (ts.skip_name("in")) op = "in";
    else if (ts.is_name("not") && ts.is_name("in", 1)) {
      ts.next();
      ts.next();
      op = "notin";
    } else break;
    cmp->ops.push_back(op);
    cmp->items.push_back(parse_math1(ts));
  }
  return cmp->ops.empty() ? first : cmp;
}

ExprPtr parse_not(TokenStream& ts) {
  const int line = ts.line();
  if (ts.skip_name("not")) return make(Expr::Type::Not, line, {parse_not(ts)});
  return parse_compare(ts);
}
ExprPtr parse_and(TokenStream& ts) {
  ExprPtr left = parse_not(ts);
  while (ts.skip_name("and")) left = make(Expr::Type::Binary, left->line, {left, parse_not(ts)}, "and");
  return left;
}
ExprPtr parse_or(TokenStream& ts) {
  ExprPtr left = parse_and(ts);
  while (ts.skip_name("or")) left = make(Expr::Type::Binary, left->line, {left, parse_and(ts)}, "or");
  return left;
}

}  // namespace

ExprPtr parse_expression(TokenStream& ts, bool with_condition) {
  ExprPtr expr = parse_or(ts);
  if (!with_condition) return expr;
  while (ts.skip_name("if")) {
    ExprPtr test = parse_or(ts);
    ExprPtr otherwise = ts.skip_name("else") ? parse_expression(ts) : nullptr;
    expr = make(Expr::Type::Condition, expr->line, {expr, test, otherwise});
  }
  return expr;
}

ExprPtr parse_tuple(TokenStream& ts, bool with_condition) {
  const int line = ts.line();
  std::vector<ExprPtr> items;
  bool comma = false;
  for (;;) {
    if (!items.empty()) {
      if (!ts.skip_op(",")) break;
      comma = true;
    }
    if (ts.at_end() || ts.is_op(")") || ts.is_op("]") || ts.is_op("}") || ts.is_op("=") || ts.is_name("in") ||
        (!items.empty() && (ts.is_name("if") || ts.is_name("recursive"))))
      break;
    items.push_back(parse_expression(ts, with_condition));
  }
  if (items.empty()) ts.error("expected an expression");
  if (!comma) return items[0];
  return make(Expr::Type::Tuple, line, std::move(items));
}

}  // namespace vkamp::chat
