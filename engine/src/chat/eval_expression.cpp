// Expressions with Python's operators and jinja2's attribute and item
// lookup (the sandbox's: obj.x tries the attribute, then the item; obj[x]
// the item, then the attribute; what is missing is undefined).
#include <algorithm>
#include <cmath>
#include <optional>

#include "python_text.hpp"
#include "renderer.hpp"

namespace vkamp::chat {
namespace {

bool is_int(const Value& v) { return v.kind == Value::Kind::Int || v.kind == Value::Kind::Bool; }
int64_t int_of(const Value& v) { return v.kind == Value::Kind::Bool ? v.b : v.i; }

[[noreturn]] void undefined_error(const Value& v) {
  fail(v.s.empty() ? "an undefined value was used" : "'" + v.s + "' is undefined");
}

[[noreturn]] void operand_error(const std::string& op, const Value& a, const Value& b) {
  if (a.is_undefined()) undefined_error(a);
  if (b.is_undefined()) undefined_error(b);
  fail("unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
}

Value repeat(const Value& seq, int64_t times) {
  if (seq.is_string()) {
    std::string out;
    for (int64_t k = 0; k < times; ++k) out += seq.s;
    Value v = Value::string(std::move(out));
    v.markup = seq.markup;
    return v;
  }
  List out;
  for (int64_t k = 0; k < times; ++k) out.insert(out.end(), seq.list->begin(), seq.list->end());
  return Value::make_list(std::move(out), seq.tuple);
}

Value arithmetic(const std::string& op, const Value& a, const Value& b) {
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      if (!a.markup && !b.markup) return Value::string(a.s + b.s);
      // Markup + str escapes the str (markupsafe), whichever side the Markup is on.
      Value m = Value::string((a.markup ? a.s : html_escape(a.s)) + (b.markup ? b.s : html_escape(b.s)));
      m.markup = true;
      return m;
    }
    if (a.is_list() && b.is_list() && a.tuple == b.tuple && !a.generator && !b.generator) {
      List out = *a.list;
      out.insert(out.end(), b.list->begin(), b.list->end());
      return Value::make_list(std::move(out), a.tuple);
    }
  }
  if (op == "%" && a.is_string()) return Value::string(python_percent(a.s, b));
  auto repeatable = [](const Value& v) { return v.is_string() || (v.is_list() && !v.generator); };
  if (op == "*" && repeatable(a) && is_int(b)) return repeat(a, int_of(b));
  if (op == "*" && repeatable(b) && is_int(a)) return repeat(b, int_of(a));
  if (!a.is_number() || !b.is_number()) operand_error(op, a, b);
  if (is_int(a) && is_int(b)) {
    const int64_t x = int_of(a), y = int_of(b);
    if (op == "+") return Value::integer(x + y);
    if (op == "-") return Value::integer(x - y);
    if (op == "*") return Value::integer(x * y);
    if ((op == "//" || op == "%" || op == "/") && y == 0) fail("division by zero");
    if (op == "//") return Value::integer(x / y - ((x % y != 0) && ((x < 0) != (y < 0))));
    if (op == "%") return Value::integer(((x % y) + y) % y);
    if (op == "**" && y >= 0) {
      int64_t r = 1;
      for (int64_t k = 0; k < y; ++k) r *= x;
      return Value::integer(r);
    }
  }
  const double x = as_double(a), y = as_double(b);
  if (op == "+") return Value::real(x + y);
  if (op == "-") return Value::real(x - y);
  if (op == "*") return Value::real(x * y);
  if (op == "**") return Value::real(std::pow(x, y));
  if (y == 0) fail("float division by zero");
  if (op == "/") return Value::real(x / y);
  if (op == "//") return Value::real(std::floor(x / y));
  if (op == "%") {
    const double r = std::fmod(x, y);
    return Value::real(r != 0 && ((r < 0) != (y < 0)) ? r + y : r);
  }
  fail("unknown operator " + op);
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind) {
    case Value::Kind::String:
      if (!item.is_string()) fail("'in <string>' requires string as left operand, not " + type_name(item));
      return container.s.find(item.s) != std::string::npos;
    case Value::Kind::List:
      for (const Value& x : *container.list)
        if (equal(x, item)) return true;
      return false;
    case Value::Kind::Dict:
      return item.is_string() && container.find(item.s) != nullptr;
    case Value::Kind::Undefined: return false;
    default: fail("argument of type '" + type_name(container) + "' is not iterable");
  }
}

}  // namespace

Args Renderer::eval_args(const Expr& e, std::size_t first) {
  Args args;
  for (std::size_t k = first; k < e.items.size(); ++k) args.positional.push_back(eval(*e.items[k]));
  for (const auto& [name, expr] : e.keywords) args.keyword.emplace_back(name, eval(*expr));
  return args;
}

Value Renderer::call(const Value& callee, Args& args, const std::string& what) {
  if (callee.kind == Value::Kind::Function) return (*callee.fn)(args);
  if (callee.is_undefined()) undefined_error(callee);
  fail("'" + type_name(callee) + "' object (" + what + ") is not callable");
}

Value Renderer::eval_getattr(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) fail("'" + (obj.s.empty() ? std::string("value") : obj.s) + "' is undefined (reading ." + name + ")");
  if (obj.is_dict() && obj.namespace_) {
    const Value* v = obj.find(name);
    return v ? *v : Value::undefined(name);
  }
  Value method = method_of(obj, name);
  if (!method.is_undefined()) return method;
  if (obj.is_dict()) {
    const Value* v = obj.find(name);
    if (v) return *v;
  }
  return Value::undefined(name);
}

Value Renderer::eval_getitem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) fail("'" + (obj.s.empty() ? std::string("value") : obj.s) + "' is undefined (reading [" + repr(key) + "])");
  if (obj.is_dict() && !obj.namespace_) {
    if (key.is_string()) {
      const Value* v = obj.find(key.s);
      if (v) return *v;
      return method_of(obj, key.s).is_undefined() ? Value::undefined(key.s) : method_of(obj, key.s);
    }
    const Value* v = obj.find_key(key);
    return v ? *v : Value::undefined();
  }
  if (obj.is_list() && obj.generator) return Value::undefined();  // not subscriptable
  if ((obj.is_list() || obj.is_string()) && is_int(key)) {
    int64_t k = int_of(key);
    const int64_t n = length(obj);
    if (k < 0) k += n;
    if (k < 0 || k >= n) return Value::undefined();
    if (obj.is_list()) return (*obj.list)[static_cast<std::size_t>(k)];
    return Value::string(code_points(obj.s)[static_cast<std::size_t>(k)]);
  }
  if (key.is_string()) return eval_getattr(obj, key.s);
  return Value::undefined();
}

Value Renderer::eval_slice(const Expr& e) {
  const Value obj = eval(*e.items[0]);
  auto bound = [&](const ExprPtr& x) -> std::optional<int64_t> {
    if (!x) return std::nullopt;
    const Value v = eval(*x);
    if (v.is_none()) return std::nullopt;
    if (!is_int(v)) fail("slice indices must be integers or None");
    return int_of(v);
  };
  const auto start = bound(e.items[1]), stop = bound(e.items[2]), step_given = bound(e.items[3]);
  const int64_t step = step_given.value_or(1);
  if (step == 0) fail("slice step cannot be zero");
  List items;
  if (obj.is_string()) {
    for (auto& c : code_points(obj.s)) items.push_back(Value::string(std::move(c)));
  } else if (obj.is_list() && !obj.generator) {
    items = *obj.list;
  } else {
    if (obj.is_undefined()) undefined_error(obj);
    fail("'" + type_name(obj) + "' object is not subscriptable");
  }
  // Python's slice.indices: clamp each bound into the sequence.
  const auto n = static_cast<int64_t>(items.size());
  auto clamp = [&](std::optional<int64_t> v, int64_t otherwise) {
    if (!v) return otherwise;
    int64_t k = *v < 0 ? *v + n : *v;
    if (step > 0) return std::clamp<int64_t>(k, 0, n);
    return std::clamp<int64_t>(k, -1, n - 1);
  };
  const int64_t lo = clamp(start, step > 0 ? 0 : n - 1), hi = clamp(stop, step > 0 ? n : -1);
  List out;
  for (int64_t k = lo; step > 0 ? k < hi : k > hi; k += step) out.push_back(items[static_cast<std::size_t>(k)]);
  if (!obj.is_string()) return Value::make_list(std::move(out), obj.tuple);
  std::string s;
  for (const Value& c : out) s += c.s;
  return Value::string(std::move(s));
}

Value Renderer::eval_binary(const Expr& e) {
  const std::string& op = e.name;
  const Value a = eval(*e.items[0]);
  if (op == "and") return truthy(a) ? eval(*e.items[1]) : a;
  if (op == "or") return truthy(a) ? a : eval(*e.items[1]);
  const Value b = eval(*e.items[1]);
  if (op == "~") return Value::string(to_str(a) + to_str(b));
  return arithmetic(op, a, b);
}

Value Renderer::eval_compare(const Expr& e) {
  Value left = eval(*e.items[0]);
  for (std::size_t k = 0; k < e.ops.size(); ++k) {
    Value right = eval(*e.items[k + 1]);
    const std::string& op = e.ops[k];
    bool r;
    if (op == "==") r = equal(left, right);
    else if (op == "!=") r = !equal(left, right);
    else if (op == "<") r = less(left, right);
    else if (op == ">") r = less(right, left);
    else if (op == "<=") r = !less(right, left);
    else if (op == ">=") r = !less(left, right);
    else if (op == "in") r = contains(right, left);
    else r = !contains(right, left);
    if (!r) return Value::boolean(false);
    left = std::move(right);
  }
  return Value::boolean(true);
}

Value Renderer::eval(const Expr& e) {
  switch (e.type) {
    case Expr::Type::Literal: return e.value;
    case Expr::Type::Name: return lookup(e.name);
    case Expr::Type::List:
    case Expr::Type::Tuple: {
      List items;
      for (const auto& x : e.items) items.push_back(eval(*x));
      return Value::make_list(std::move(items), e.type == Expr::Type::Tuple);
    }
    case Expr::Type::Dict: {
      Value d = Value::make_dict();
      for (std::size_t k = 0; k < e.items.size(); k += 2) {
        const Value key = eval(*e.items[k]);
        if (!key.is_string() && !key.is_number() && !key.is_none()) fail("unhashable type: '" + type_name(key) + "'");
        Value v = eval(*e.items[k + 1]);
        bool replaced = false;
        for (auto& [name, old] : *d.dict)
          if (equal(name, key)) old = v, replaced = true;
        if (!replaced) d.dict->emplace_back(key, std::move(v));
      }
      return d;
    }
    case Expr::Type::Getattr: return eval_getattr(eval(*e.items[0]), e.name);
    case Expr::Type::Getitem: return eval_getitem(eval(*e.items[0]), eval(*e.items[1]));
    case Expr::Type::Slice: return eval_slice(e);
    case Expr::Type::Call: {
      const Value callee = eval(*e.items[0]);
      Args args = eval_args(e, 1);
      return call(callee, args, e.items[0]->type == Expr::Type::Name ? e.items[0]->name : "a value");
    }
    case Expr::Type::Filter: {
      const Value v = eval(*e.items[0]);
      Args args = eval_args(e, 1);
      return apply_filter(*this, e.name, v, args);
    }
    case Expr::Type::Test: {
      const Value v = eval(*e.items[0]);
      Args args = eval_args(e, 1);
      return Value::boolean(apply_test(*this, e.name, v, args) != e.negated);
    }
    case Expr::Type::Not: return Value::boolean(!truthy(eval(*e.items[0])));
    case Expr::Type::Negate:
    case Expr::Type::Plus: {
      const Value v = eval(*e.items[0]);
      const bool neg = e.type == Expr::Type::Negate;
      if (is_int(v)) return Value::integer(neg ? -int_of(v) : int_of(v));
      if (v.kind == Value::Kind::Float) return Value::real(neg ? -v.f : v.f);
      if (v.is_undefined()) undefined_error(v);
      fail("bad operand type for unary " + std::string(neg ? "-" : "+") + ": '" + type_name(v) + "'");
    }
    case Expr::Type::Binary: return eval_binary(e);
    case Expr::Type::Compare: return eval_compare(e);
    case Expr::Type::Condition:
      if (truthy(eval(*e.items[1]))) return eval(*e.items[0]);
      return e.items[2] ? eval(*e.items[2]) : Value::undefined();
  }
  fail("unknown expression");
}

}  // namespace vkamp::chat
