// A parsed template: expressions and statements as jinja2's parser builds
// them (its precedence, its filters and tests after a unary operand).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "value.hpp"

namespace vkamp::chat {

struct Expr;
using ExprPtr = std::shared_ptr<Expr>;

struct Expr {
  enum class Type {
    Literal,    // value
    Name,       // name
    List,       // items
    Tuple,      // items
    Dict,       // items: key, value, key, value...
    Getattr,    // items[0].name
    Getitem,    // items[0][items[1]]
    Slice,      // items[0][items[1]:items[2]:items[3]] (each may be null)
    Call,       // items[0](items[1..], keywords)
    Filter,     // items[0] | name(items[1..], keywords); items[0] null in {% filter %}
    Test,       // items[0] is [not] name(items[1..], keywords)
    Not,        // not items[0]
    Negate,     // -items[0]
    Plus,       // +items[0]
    Binary,     // items[0] name items[1]: + - * / // % ** ~ and or in notin
    Compare,    // items[0] ops[0] items[1] ops[1] items[2]...
    Condition,  // items[0] if items[1] else items[2] (items[2] may be null)
  };
  Type type;
  Value value;
  std::string name;
  std::vector<ExprPtr> items;
  std::vector<std::pair<std::string, ExprPtr>> keywords;
  std::vector<std::string> ops;
  bool negated = false;
  int line = 0;
};

struct Node;
using Body = std::vector<Node>;

struct Node {
  enum class Type {
    Text,        // text
    Print,       // {{ expr }}
    If,          // expr; body; orelse (an elif is an If alone in orelse)
    For,         // targets in expr [if condition]; body; orelse
    Set,         // targets = expr; or attribute_target: targets[0].targets[1] = expr
    SetBlock,    // {% set targets[0] %}body{% endset %}
    Macro,       // name(params = defaults); body
    Break,
    Continue,
    Generation,  // {% generation %}body{% endgeneration %}
    FilterBlock, // {% filter expr %}body{% endfilter %} (expr a Filter chain on null)
  };
  Type type;
  std::string text;
  ExprPtr expr, condition;
  std::vector<std::string> targets;
  bool attribute_target = false;
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;  // one a param, null where none
  Body body, orelse;
  int line = 0;
};

}  // namespace vkamp::chat
