// jinja2's builtin tests (x is defined, x is string, ...), as jinja2 answers
// them for Python's types: undefined is iterable and a sequence (it has
// __iter__, __len__ and __getitem__), a bool is a number, not an integer.
#include <set>

#include "parser.hpp"
#include "renderer.hpp"
#include "text_case.hpp"

namespace vkamp::chat {
namespace {

const std::set<std::string> jinja_builtins = {
    "!=",   "<",      "<=",    "==",    ">",       ">=",      "boolean",  "callable", "defined", "divisibleby",
    "eq",   "equalto", "escaped", "even", "false",  "filter",  "float",    "ge",       "greaterthan", "gt",
    "in",   "integer", "iterable", "le",  "lessthan", "lower", "lt",       "mapping",  "ne",      "none",
    "number", "odd",  "sameas", "sequence", "string", "test",  "true",     "undefined", "upper"};
const std::set<std::string> unimplemented = {"escaped", "filter", "test"};

}  // namespace

bool known_test(const std::string& name) { return jinja_builtins.count(name) && !unimplemented.count(name); }
bool jinja_builtin_test(const std::string& name) { return jinja_builtins.count(name) != 0; }

bool apply_test(Renderer& /*r*/, const std::string& name, const Value& v, Args& a) {
  using K = Value::Kind;
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "string") return v.is_string();
  if (name == "number") return v.is_number();
  if (name == "integer") return v.kind == K::Int;
  if (name == "float") return v.kind == K::Float;
  if (name == "boolean") return v.kind == K::Bool;
  if (name == "true") return v.kind == K::Bool && v.b;
  if (name == "false") return v.kind == K::Bool && !v.b;
  if (name == "mapping") return v.is_dict() && !v.namespace_;
  if (name == "iterable") return v.is_undefined() || v.is_string() || v.is_list() || (v.is_dict() && !v.namespace_);
  if (name == "sequence") return v.is_undefined() || v.is_string() || (v.is_list() && !v.generator) || (v.is_dict() && !v.namespace_);
  if (name == "callable") return v.kind == K::Function;
  if (name == "lower") return to_lower(to_str(v)) == to_str(v);
  if (name == "upper") return to_upper(to_str(v)) == to_str(v);
  if (name == "odd" || name == "even") {
    if (v.kind != K::Int) fail("the test '" + name + "' needs an integer, found " + type_name(v));
    return (((v.i % 2) + 2) % 2 == 1) == (name == "odd");
  }
  if (name == "divisibleby") {
    const Value n = a.need(0, "num", name);
    if (v.kind != K::Int || n.kind != K::Int || n.i == 0) fail("divisibleby needs non-zero integers");
    return v.i % n.i == 0;
  }
  const Value other = a.need(0, "other", name);
  if (name == "eq" || name == "equalto" || name == "==") return equal(v, other);
  if (name == "ne" || name == "!=") return !equal(v, other);
  if (name == "lt" || name == "lessthan" || name == "<") return less(v, other);
  if (name == "gt" || name == "greaterthan" || name == ">") return less(other, v);
  if (name == "le" || name == "<=") return !less(other, v);
  if (name == "ge" || name == ">=") return !less(v, other);
  if (name == "sameas") {
    if (v.kind != other.kind) return false;
    if (v.is_list()) return v.list == other.list;
    if (v.is_dict()) return v.dict == other.dict;
    return equal(v, other);  // None, bools and small ints are one object each in Python
  }
  if (name == "in") {
    if (other.is_string()) return v.is_string() && other.s.find(v.s) != std::string::npos;
    for (const Value& x : iterate(other))
      if (equal(x, v)) return true;
    return false;
  }
  fail("No test named '" + name + "'.");
}

}  // namespace vkamp::chat
