#include "value.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "python_text.hpp"

namespace vkamp::chat {

void fail(const std::string& what) { throw RenderError(what); }

Value Value::undefined(std::string name) {
  Value v;
  v.s = std::move(name);
  return v;
}
Value Value::none() {
  Value v;
  v.kind = Kind::None;
  return v;
}
Value Value::boolean(bool b) {
  Value v;
  v.kind = Kind::Bool;
  v.b = b;
  return v;
}
Value Value::integer(int64_t i) {
  Value v;
  v.kind = Kind::Int;
  v.i = i;
  return v;
}
Value Value::real(double f) {
  Value v;
  v.kind = Kind::Float;
  v.f = f;
  return v;
}
Value Value::string(std::string s) {
  Value v;
  v.kind = Kind::String;
  v.s = std::move(s);
  return v;
}
Value Value::make_list(List items, bool tuple) {
  Value v;
  v.kind = Kind::List;
  v.list = std::make_shared<List>(std::move(items));
  v.tuple = tuple;
  return v;
}
Value Value::make_dict(Dict items) {
  Value v;
  v.kind = Kind::Dict;
  v.dict = std::make_shared<Dict>(std::move(items));
  return v;
}
Value Value::function(Function f) {
  Value v;
  v.kind = Kind::Function;
  v.fn = std::make_shared<Function>(std::move(f));
  return v;
}

const Value* Value::find(const std::string& key) const {
  if (kind != Kind::Dict) return nullptr;
  for (const auto& [k, v] : *dict)
    if (k.kind == Kind::String && k.s == key) return &v;
  return nullptr;
}

const Value* Value::find_key(const Value& key) const {
  if (kind != Kind::Dict) return nullptr;
  for (const auto& [k, v] : *dict)
    if (equal(k, key)) return &v;
  return nullptr;
}

Value Args::get(std::size_t index, const std::string& name, Value otherwise) const {
  if (index < positional.size()) return positional[index];
  for (const auto& [k, v] : keyword)
    if (k == name) return v;
  return otherwise;
}

Value Args::need(std::size_t index, const std::string& name, const std::string& function) const {
  Value v = get(index, name);
  if (v.is_undefined() && index >= positional.size()) {
    bool named = false;
    for (const auto& kv : keyword) named = named || kv.first == name;
    if (!named) fail(function + "() missing required argument '" + name + "'");
  }
  return v;
}

bool truthy(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return false;
    case Value::Kind::Bool: return v.b;
    case Value::Kind::Int: return v.i != 0;
    case Value::Kind::Float: return v.f != 0;
    case Value::Kind::String: return !v.s.empty();
    case Value::Kind::List: return v.generator || !v.list->empty();
    case Value::Kind::Dict: return v.namespace_ || !v.dict->empty();
    case Value::Kind::Function: return true;
  }
  return false;
}

std::string type_name(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Undefined: return "Undefined";
    case Value::Kind::None: return "NoneType";
    case Value::Kind::Bool: return "bool";
    case Value::Kind::Int: return "int";
    case Value::Kind::Float: return "float";
    case Value::Kind::String: return "str";
    case Value::Kind::List: return v.generator ? "generator" : v.tuple ? "tuple" : "list";
    case Value::Kind::Dict: return v.namespace_ ? "Namespace" : "dict";
    case Value::Kind::Function: return "function";
  }
  return "?";
}

std::string repr(const Value& v) {
  switch (v.kind) {
    case Value::Kind::String: return v.markup ? "Markup(" + python_string_repr(v.s) + ")" : python_string_repr(v.s);
    case Value::Kind::Undefined: return "Undefined";
    case Value::Kind::List: {
      if (v.generator) fail("printing a generator (the result of |map, |select, ...) is not supported by vkamp's renderer: jinja2 prints its address");
      std::string out = v.tuple ? "(" : "[";
      for (std::size_t k = 0; k < v.list->size(); ++k) out += (k ? ", " : "") + repr((*v.list)[k]);
      if (v.tuple && v.list->size() == 1) out += ",";
      return out + (v.tuple ? ")" : "]");
    }
    case Value::Kind::Dict: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, x] : *v.dict) {
        out += (first ? "" : ", ") + repr(k) + ": " + repr(x);
        first = false;
      }
      out += "}";
      return v.namespace_ ? "<Namespace " + out + ">" : out;
    }
    default: return to_str(v);
  }
}

std::string to_str(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Undefined: return "";
    case Value::Kind::None: return "None";
    case Value::Kind::Bool: return v.b ? "True" : "False";
    case Value::Kind::Int: return std::to_string(v.i);
    case Value::Kind::Float: return python_float_repr(v.f);
    case Value::Kind::String: return v.s;
    case Value::Kind::Function: return "<function>";
    default: return repr(v);
  }
}

double as_double(const Value& v) {
  if (v.kind == Value::Kind::Float) return v.f;
  if (v.kind == Value::Kind::Int) return static_cast<double>(v.i);
  if (v.kind == Value::Kind::Bool) return v.b ? 1 : 0;
  fail("expected a number, found " + type_name(v));
}

bool equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind == Value::Kind::Float || b.kind == Value::Kind::Float) return as_double(a) == as_double(b);
    return (a.kind == Value::Kind::Bool ? a.b : a.i) == (b.kind == Value::Kind::Bool ? b.b : b.i);
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return true;
    case Value::Kind::String: return a.s == b.s;
    case Value::Kind::List:
      if (a.generator || b.generator) return a.list == b.list;
      if (a.tuple != b.tuple || a.list->size() != b.list->size()) return false;
      for (std::size_t k = 0; k < a.list->size(); ++k)
        if (!equal((*a.list)[k], (*b.list)[k])) return false;
      return true;
    case Value::Kind::Dict:
      if (a.namespace_ || b.namespace_) return a.dict == b.dict;
      if (a.dict->size() != b.dict->size()) return false;
      for (const auto& [k, x] : *a.dict) {
        const Value* y = b.find_key(k);
        if (!y || !equal(x, *y)) return false;
      }
      return true;
    case Value::Kind::Function: return a.fn == b.fn;
    default: return false;
  }
}

bool less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind == Value::Kind::Int && b.kind == Value::Kind::Int) return a.i < b.i;
    return as_double(a) < as_double(b);
  }
  if (a.is_string() && b.is_string()) return a.s < b.s;  // UTF-8 bytes sort as code points do
  if (a.is_list() && b.is_list() && a.tuple == b.tuple && !a.generator && !b.generator) {
    const List &x = *a.list, &y = *b.list;
    for (std::size_t k = 0; k < std::min(x.size(), y.size()); ++k) {
      if (less(x[k], y[k])) return true;
      if (less(y[k], x[k])) return false;
    }
    return x.size() < y.size();
  }
  fail("'<' not supported between instances of '" + type_name(a) + "' and '" + type_name(b) + "'");
}

std::vector<std::string> code_points(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < s.size();) {
    const auto c = static_cast<unsigned char>(s[k]);
    const std::size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    out.push_back(s.substr(k, n));
    k += n;
  }
  return out;
}

List iterate(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Undefined: return {};
    case Value::Kind::List: {
      if (!v.generator) return *v.list;
      List items = std::move(*v.list);  // a generator is read once
      v.list->clear();
      return items;
    }
    case Value::Kind::Dict: {
      if (v.namespace_) break;
      List keys;
      for (const auto& kv : *v.dict) keys.push_back(kv.first);
      return keys;
    }
    case Value::Kind::String: {
      List chars;
      for (auto& c : code_points(v.s)) chars.push_back(Value::string(std::move(c)));
      return chars;
    }
    default: break;
  }
  fail("'" + type_name(v) + "' object is not iterable");
}

int64_t length(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Undefined: return 0;
    case Value::Kind::String: return static_cast<int64_t>(code_points(v.s).size());
    case Value::Kind::List:
      if (!v.generator) return static_cast<int64_t>(v.list->size());
      break;
    case Value::Kind::Dict:
      if (!v.namespace_) return static_cast<int64_t>(v.dict->size());
      break;
    default: break;
  }
  fail("object of type '" + type_name(v) + "' has no len()");
}

}  // namespace vkamp::chat
