// jinja2's builtin filters that chat templates use, with jinja2's
// arguments and defaults; tojson is transformers' (json.dumps with
// ensure_ascii=False). jinja2's other builtins are refused when the template
// loads; names jinja2 lacks too fail when rendered, as in jinja2.
#include <algorithm>
#include <cmath>
#include <set>

#include "parser.hpp"
#include "python_text.hpp"
#include "renderer.hpp"
#include "text_case.hpp"

namespace vkamp::chat {
namespace {

const std::set<std::string> implemented = {
    "abs",   "capitalize", "count", "d",    "default", "dictsort",   "first",  "float",     "indent",
    "int",   "items",      "join",  "last", "length",  "list",       "lower",  "map",       "max",
    "min",   "reject",     "rejectattr",    "replace", "reverse",    "safe",   "select",    "selectattr",
    "sort",  "string",     "sum",   "title", "tojson", "trim",       "unique", "upper",     "round"};
const std::set<std::string> jinja_builtins = {
    "abs",        "attr",   "batch",  "capitalize", "center",    "count",   "d",        "default",   "dictsort",
    "e",          "escape", "filesizeformat", "first", "float",  "forceescape", "format", "groupby", "indent",
    "int",        "items",  "join",   "last",       "length",    "list",    "lower",    "map",       "max",
    "min",        "pprint", "random", "reject",     "rejectattr", "replace", "reverse", "round",     "safe",
    "select",     "selectattr", "slice", "sort",    "string",    "striptags", "sum",    "title",     "tojson",
    "trim",       "truncate", "unique", "upper",    "urlencode", "urlize",  "wordcount", "wordwrap", "xmlattr"};

// An attribute path "a.b" or "0" read as jinja2's make_attrgetter reads it.
Value attribute(Renderer& r, Value v, const Value& path) {
  if (path.kind == Value::Kind::Int) return r.eval_getitem(v, path);
  std::string rest = to_str(path);
  for (;;) {
    const std::size_t dot = rest.find('.');
    const std::string part = rest.substr(0, dot);
    const bool digits = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    v = r.eval_getitem(v, digits ? Value::integer(std::stoll(part)) : Value::string(part));
    if (dot == std::string::npos) return v;
    rest = rest.substr(dot + 1);
  }
}

// The sort key jinja2 uses: strings lowered unless case_sensitive.
Value sort_key(const Value& v, bool case_sensitive) {
  return v.is_string() && !case_sensitive ? Value::string(to_lower(v.s)) : v;
}

// What jinja2's generator filters return (map, select, items, ...).
Value generator(List items) {
  Value v = Value::make_list(std::move(items));
  v.generator = true;
  return v;
}

// A string filter's result: Markup stays Markup (markupsafe wraps str's methods).
Value like(const Value& input, std::string s) {
  Value v = Value::string(std::move(s));
  v.markup = input.is_string() && input.markup;
  return v;
}

Value select(Renderer& r, const Value& seq, Args& a, bool by_attribute, bool keep) {
  List out;
  const std::size_t first_test_arg = by_attribute ? 1 : 0;
  const Value attr = by_attribute ? a.need(0, "attribute", "selectattr") : Value();
  const Value test = a.get(first_test_arg, "test");
  Args test_args;
  for (std::size_t k = first_test_arg + 1; k < a.positional.size(); ++k) test_args.positional.push_back(a.positional[k]);
  if (!truthy(seq)) return generator({});  // jinja2's "if seq:" (None selects nothing)
  for (const Value& item : iterate(seq)) {
    const Value x = by_attribute ? attribute(r, item, attr) : item;
    const bool pass = test.is_undefined() ? truthy(x) : apply_test(r, to_str(test), x, test_args);
    if (pass == keep) out.push_back(item);
  }
  return generator(std::move(out));
}

Value indent(const std::string& text, const Value& width_v, bool first, bool blank) {
  const std::string pad = width_v.is_string() ? width_v.s : std::string(static_cast<std::size_t>(width_v.i), ' ');
  std::string s = text + "\n";  // jinja2 adds one, so a trailing newline's empty line survives splitlines
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t k = 0; k < s.size(); ++k)
    if (s[k] == '\n' || s[k] == '\r') {
      lines.push_back(s.substr(start, k - start));
      if (s[k] == '\r' && k + 1 < s.size() && s[k + 1] == '\n') ++k;
      start = k + 1;
    }
  if (start < s.size()) lines.push_back(s.substr(start));
  std::string out = lines.empty() ? "" : lines[0];
  for (std::size_t k = 1; k < lines.size(); ++k) out += "\n" + (blank || !lines[k].empty() ? pad + lines[k] : lines[k]);
  return Value::string(first ? pad + out : out);
}

Value tojson(const Value& v, Args& a) {
  JsonStyle st;
  st.ensure_ascii = truthy(a.get(0, "ensure_ascii", Value::boolean(false)));
  const Value indent_v = a.get(1, "indent", Value::none());
  if (!indent_v.is_none()) {
    if (indent_v.kind != Value::Kind::Int) fail("tojson indent other than an integer is not supported by vkamp's renderer");
    st.indent = static_cast<int>(indent_v.i);
  }
  const Value separators = a.get(2, "separators", Value::none());
  if (!separators.is_none()) {
    if (!separators.is_list() || separators.list->size() != 2) fail("tojson separators must be a pair of strings");
    st.separators_given = true;
    st.item_separator = to_str((*separators.list)[0]);
    st.key_separator = to_str((*separators.list)[1]);
  }
  st.sort_keys = truthy(a.get(3, "sort_keys", Value::boolean(false)));
  return Value::string(json_dumps(v, st));
}

Value sorted(Renderer& r, const Value& v, Args& a, bool reverse_default) {
  const bool reverse = truthy(a.get(0, "reverse", Value::boolean(reverse_default)));
  const bool case_sensitive = truthy(a.get(1, "case_sensitive", Value::boolean(false)));
  const Value attr = a.get(2, "attribute");
  List items = iterate(v);
  auto key = [&](const Value& x) { return sort_key(attr.is_undefined() ? x : attribute(r, x, attr), case_sensitive); };
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    return reverse ? less(key(y), key(x)) : less(key(x), key(y));
  });
  return Value::make_list(std::move(items));
}

}  // namespace

bool known_filter(const std::string& name) { return implemented.count(name) != 0; }
bool jinja_builtin_filter(const std::string& name) { return jinja_builtins.count(name) != 0; }

Value apply_filter(Renderer& r, const std::string& name, const Value& v, Args& a) {
  if (name == "tojson") return tojson(v, a);
  if (name == "default" || name == "d") {
    const bool boolean = truthy(a.get(1, "boolean", Value::boolean(false)));
    if (v.is_undefined() || (boolean && !truthy(v))) return a.get(0, "default_value", Value::string(""));
    return v;
  }
  if (name == "length" || name == "count") return Value::integer(length(v));
  if (name == "safe") {
    Value m = v.is_string() ? v : Value::string(to_str(v));
    m.markup = true;
    return m;
  }
  if (name == "string") return like(v, to_str(v));
  if (name == "trim") {
    const Value chars = a.get(0, "chars", Value::none());
    return like(v, python_strip(to_str(v), chars.is_string() ? &chars.s : nullptr, true, true));
  }
  if (name == "upper") return like(v, to_upper(to_str(v)));
  if (name == "lower") return like(v, to_lower(to_str(v)));
  if (name == "capitalize") return like(v, capitalize(to_str(v)));
  if (name == "title") return like(v, to_title(to_str(v)));
  if (name == "list") return Value::make_list(iterate(v));
  if (name == "join") {
    const Value attr = a.get(1, "attribute");
    std::string out;
    bool first = true;
    for (const Value& x : iterate(v)) {
      out += (first ? "" : to_str(a.get(0, "d", Value::string("")))) + to_str(attr.is_undefined() ? x : attribute(r, x, attr));
      first = false;
    }
    return Value::string(out);
  }
  if (name == "items") {
    if (v.is_undefined()) return generator({});
    if (!v.is_dict() || v.namespace_) fail("Can only get item pairs from a mapping.");
    List out;
    for (const auto& [k, x] : *v.dict) out.push_back(Value::make_list({k, x}, true));
    return generator(std::move(out));
  }
  if (name == "dictsort") {
    if (!v.is_dict()) fail("dictsort: expected a mapping, found " + type_name(v));
    const bool case_sensitive = truthy(a.get(0, "case_sensitive", Value::boolean(false)));
    const std::string by = to_str(a.get(1, "by", Value::string("key")));
    const bool reverse = truthy(a.get(2, "reverse", Value::boolean(false)));
    List items;
    for (const auto& [k, x] : *v.dict) items.push_back(Value::make_list({k, x}, true));
    const std::size_t pos = by == "value" ? 1 : 0;
    std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
      const Value kx = sort_key((*x.list)[pos], case_sensitive), ky = sort_key((*y.list)[pos], case_sensitive);
      return reverse ? less(ky, kx) : less(kx, ky);
    });
    return Value::make_list(std::move(items));
  }
  if (name == "replace") {
    Args m;
    m.positional = {a.need(0, "old", name), a.need(1, "new", name)};
    if (!a.get(2, "count", Value::none()).is_none()) m.positional.push_back(a.get(2, "count"));
    return r.call(method_of(Value::string(to_str(v)), "replace"), m, "replace");
  }
  if (name == "indent")
    return indent(to_str(v), a.get(0, "width", Value::integer(4)), truthy(a.get(1, "first", Value::boolean(false))),
                                truthy(a.get(2, "blank", Value::boolean(false))));
  if (name == "first" && v.is_list() && v.generator) {  // next(iter(gen)) reads one item
    if (v.list->empty()) return Value::undefined("No first item, sequence was empty.");
    Value x = v.list->front();
    v.list->erase(v.list->begin());
    return x;
  }
  if (name == "last" && v.is_list() && v.generator) fail("'generator' object is not reversible");
  if (name == "first" || name == "last") {
    const List items = iterate(v);
    if (items.empty()) return Value::undefined("No " + name + " item, sequence was empty.");
    return name == "first" ? items.front() : items.back();
  }
  if (name == "reverse") {
    if (v.is_string()) {
      auto cps = code_points(v.s);
      std::string out;
      for (auto it = cps.rbegin(); it != cps.rend(); ++it) out += *it;
      return Value::string(out);
    }
    List items = iterate(v);
    std::reverse(items.begin(), items.end());
    return generator(std::move(items));  // reversed(): an iterator
  }
  if (name == "sort") return sorted(r, v, a, false);
  if (name == "unique") {
    const bool case_sensitive = truthy(a.get(0, "case_sensitive", Value::boolean(false)));
    const Value attr = a.get(1, "attribute");
    List out, seen;
    for (const Value& x : iterate(v)) {
      const Value key = sort_key(attr.is_undefined() ? x : attribute(r, x, attr), case_sensitive);
      if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equal(s, key); })) {
        seen.push_back(key);
        out.push_back(x);
      }
    }
    return generator(std::move(out));
  }
  if (name == "min" || name == "max") {
    const bool case_sensitive = truthy(a.get(0, "case_sensitive", Value::boolean(false)));
    const Value attr = a.get(1, "attribute");
    const List items = iterate(v);
    if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    const Value* best = &items[0];
    auto key = [&](const Value& x) { return sort_key(attr.is_undefined() ? x : attribute(r, x, attr), case_sensitive); };
    for (const Value& x : items)
      if (name == "min" ? less(key(x), key(*best)) : less(key(*best), key(x))) best = &x;
    return *best;
  }
  if (name == "select" || name == "reject") return select(r, v, a, false, name == "select");
  if (name == "selectattr" || name == "rejectattr") return select(r, v, a, true, name == "selectattr");
  if (name == "map") {
    List out;
    if (!truthy(v)) return generator({});  // jinja2's "if value:"
    const Value attr = a.get(99, "attribute");
    if (!attr.is_undefined()) {
      const Value otherwise = a.get(99, "default");
      for (const Value& x : iterate(v)) {
        Value y = attribute(r, x, attr);
        out.push_back(y.is_undefined() && !otherwise.is_undefined() ? otherwise : y);
      }
    } else {
      const std::string filter = to_str(a.need(0, "filter", name));
      Args rest;
      rest.positional.assign(a.positional.begin() + 1, a.positional.end());
      rest.keyword = a.keyword;
      for (const Value& x : iterate(v)) out.push_back(apply_filter(r, filter, x, rest));
    }
    return generator(std::move(out));
  }
  if (name == "int" || name == "float") {
    const Value otherwise = a.get(0, "default", name == "int" ? Value::integer(0) : Value::real(0));
    if (v.is_number()) return name == "int" ? Value::integer(static_cast<int64_t>(as_double(v))) : Value::real(as_double(v));
    if (v.is_string()) {
      const std::string t = python_strip(v.s, nullptr, true, true);
      try {
        std::size_t used = 0;
        if (name == "int") {
          const int64_t i = std::stoll(t, &used, 10);
          if (used == t.size()) return Value::integer(i);
        }
        const double f = std::stod(t, &used);
        if (used == t.size()) return name == "int" ? Value::integer(static_cast<int64_t>(f)) : Value::real(f);
      } catch (const std::exception&) {
      }
    }
    return otherwise;
  }
  if (name == "abs") {
    if (v.kind == Value::Kind::Float) return Value::real(std::fabs(v.f));
    if (v.is_number()) return Value::integer(std::llabs(static_cast<int64_t>(as_double(v))));
    fail("bad operand type for abs(): '" + type_name(v) + "'");
  }
  if (name == "round") {
    if (a.get(1, "method", Value::string("common")).s != "common") fail("round methods other than 'common' are not supported by vkamp's renderer");
    const double scale = std::pow(10.0, static_cast<double>(a.get(0, "precision", Value::integer(0)).i));
    return Value::real(std::round(as_double(v) * scale) / scale);
  }
  if (name == "sum") {
    const Value attr = a.get(0, "attribute");
    Value total = a.get(1, "start", Value::integer(0));
    for (const Value& x : iterate(v)) {
      const Value y = attr.is_undefined() ? x : attribute(r, x, attr);
      if (!total.is_number() || !y.is_number()) fail("sum of non-numbers is not supported by vkamp's renderer");
      total = total.kind == Value::Kind::Float || y.kind == Value::Kind::Float ? Value::real(as_double(total) + as_double(y))
                                                                             : Value::integer(static_cast<int64_t>(as_double(total) + as_double(y)));
    }
    return total;
  }
  fail("No filter named '" + name + "'.");
}

}  // namespace vkamp::chat
