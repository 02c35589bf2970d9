// The values a chat template computes with, as Python has them under
// jinja2: undefined, None, bools, ints, floats, strings, lists (and tuples),
// dicts that keep their insertion order (and namespaces, the one mutable
// kind), and callables (macros, globals, bound methods). Lists and dicts are
// shared, as Python's objects are.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vkamp/config_error.hpp"

namespace vkamp::chat {

// An error the template raises while it renders (raise_exception, a type
// error, an undefined attribute): jinja2 raises there too.
class RenderError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

struct Value;
struct Args;
using List = std::vector<Value>;
using Dict = std::vector<std::pair<Value, Value>>;  // keys are mostly strings; Python allows others
using Function = std::function<Value(Args&)>;

struct Value {
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Function };
  Kind kind = Kind::Undefined;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;                     // a string; for Undefined, the name it was looked up by
  std::shared_ptr<List> list;        // List
  std::shared_ptr<Dict> dict;        // Dict
  std::shared_ptr<Function> fn;      // Function
  bool tuple = false;                // a List written (a, b): repr (a, b)
  bool namespace_ = false;           // a Dict made by namespace(): attributes can be set
  bool markup = false;      // a String that is jinja2's Markup (|safe): plain strings joined to it are HTML-escaped
  bool generator = false;   // a List that is a Python generator (|map, |select...): true, no len(), read once

  static Value undefined(std::string name = {});
  static Value none();
  static Value boolean(bool v);
  static Value integer(int64_t v);
  static Value real(double v);
  static Value string(std::string v);
  static Value make_list(List items = {}, bool tuple = false);
  static Value make_dict(Dict items = {});
  static Value function(Function f);

  bool is_undefined() const { return kind == Kind::Undefined; }
  bool is_none() const { return kind == Kind::None; }
  bool is_string() const { return kind == Kind::String; }
  bool is_number() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  bool is_list() const { return kind == Kind::List; }
  bool is_dict() const { return kind == Kind::Dict; }

  // The member `key` of a dict, or nullptr.
  const Value* find(const std::string& key) const;
  const Value* find_key(const Value& key) const;
};

// The arguments of a call: positional, then keyword.
struct Args {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;

  // The argument at `index` or named `name`, or `otherwise`.
  Value get(std::size_t index, const std::string& name, Value otherwise = Value::undefined()) const;
  // The same, where the caller needs it.
  Value need(std::size_t index, const std::string& name, const std::string& function) const;
};

// Python's bool(v).
bool truthy(const Value& v);
// Python's str(v) (what {{ v }} prints; undefined prints nothing).
std::string to_str(const Value& v);
// Python's repr(v).
std::string repr(const Value& v);
// Python's == (jinja2's undefined equals only undefined).
bool equal(const Value& a, const Value& b);
// Python's <; throws RenderError on values it cannot order.
bool less(const Value& a, const Value& b);
// The Python type's name, for error messages ("str", "NoneType").
std::string type_name(const Value& v);
// The items `for x in v` visits (a dict's keys, a string's characters);
// throws RenderError on what is not iterable (None, a number).
List iterate(const Value& v);
// len(v); throws RenderError where Python has none.
int64_t length(const Value& v);
// A number as a double (bool as 0/1).
double as_double(const Value& v);

// The UTF-8 string's code points, each as its bytes (Python indexes strings by code point).
std::vector<std::string> code_points(const std::string& s);

[[noreturn]] void fail(const std::string& what);

}  // namespace vkamp::chat
