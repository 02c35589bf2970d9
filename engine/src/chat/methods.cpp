// The methods templates call on strings, dicts and lists, as Python's
// (str.strip, str.split, dict.get, dict.items, ...). The sandbox forbids
// the ones that change a list or dict (append, update, ...): calling one
// fails, as it does under transformers.
#include <algorithm>
#include <set>

#include "python_text.hpp"
#include "renderer.hpp"

#include "text_case.hpp"

namespace vkamp::chat {
namespace {

const std::set<std::string> string_methods = {
    "strip", "lstrip", "rstrip", "split", "rsplit", "startswith", "endswith", "replace", "lower", "upper",
    "title", "capitalize", "format", "find", "rfind", "count", "join", "splitlines", "isdigit", "isspace",
    "isalpha", "isalnum", "islower", "isupper", "removeprefix", "removesuffix", "index"};
const std::set<std::string> dict_methods = {"get", "items", "keys", "values", "copy"};
const std::set<std::string> list_methods = {"index", "count", "pop", "copy"};
// What the immutable sandbox refuses (jinja2.sandbox._mutable_spec).
const std::set<std::string> unsafe_methods = {"append", "reverse", "insert", "sort", "extend", "remove", "clear",
                                              "popitem", "setdefault", "update", "add", "discard"};

std::vector<Value> split(const std::string& s, const Value& sep, int64_t maxsplit) {
  std::vector<Value> out;
  if (sep.is_none() || sep.is_undefined()) {  // runs of whitespace, ends stripped
    const auto cps = code_points(s);
    std::size_t k = 0;
    while (k < cps.size()) {
      while (k < cps.size() && is_space(cps[k])) ++k;
      if (k == cps.size()) break;
      std::string word;
      if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
        for (; k < cps.size(); ++k) word += cps[k];  // the rest, as is
        out.push_back(Value::string(std::move(word)));
        break;
      }
      while (k < cps.size() && !is_space(cps[k])) word += cps[k++];
      out.push_back(Value::string(std::move(word)));
    }
    return out;
  }
  if (!sep.is_string()) fail("must be str or None, not " + type_name(sep));
  if (sep.s.empty()) fail("empty separator");
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = s.find(sep.s, start);
    if (at == std::string::npos || (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit)) break;
    out.push_back(Value::string(s.substr(start, at - start)));
    start = at + sep.s.size();
  }
  out.push_back(Value::string(s.substr(start)));
  return out;
}

bool affix(const std::string& s, const Value& what, bool prefix) {
  auto one = [&](const Value& a) {
    if (!a.is_string()) fail(std::string(prefix ? "startswith" : "endswith") + " first arg must be str or a tuple of str");
    if (a.s.size() > s.size()) return false;
    return prefix ? s.compare(0, a.s.size(), a.s) == 0 : s.compare(s.size() - a.s.size(), a.s.size(), a.s) == 0;
  };
  if (what.is_list()) return std::any_of(what.list->begin(), what.list->end(), one);
  return one(what);
}

Value string_method(const std::string& s, const std::string& name, Args& a) {
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const Value chars = a.get(0, "chars", Value::none());
    const bool left = name != "rstrip", right = name != "lstrip";
    return Value::string(python_strip(s, chars.is_string() ? &chars.s : nullptr, left, right));
  }
  if (name == "split") return Value::make_list(split(s, a.get(0, "sep", Value::none()), a.get(1, "maxsplit", Value::integer(-1)).i));
  if (name == "rsplit") {
    const Value maxsplit = a.get(1, "maxsplit", Value::integer(-1));
    if (maxsplit.i >= 0) fail("str.rsplit with maxsplit is not supported by vkamp's renderer");
    return Value::make_list(split(s, a.get(0, "sep", Value::none()), -1));
  }
  if (name == "startswith" || name == "endswith") return Value::boolean(affix(s, a.need(0, "prefix", name), name == "startswith"));
  if (name == "replace") {
    const Value old = a.need(0, "old", name), with = a.need(1, "new", name);
    const int64_t count = a.get(2, "count", Value::integer(-1)).i;
    if (!old.is_string() || !with.is_string()) fail("replace() arguments must be str");
    std::string out;
    std::size_t start = 0;
    int64_t done = 0;
    if (old.s.empty()) fail("str.replace with an empty pattern is not supported by vkamp's renderer");
    for (std::size_t at; (count < 0 || done < count) && (at = s.find(old.s, start)) != std::string::npos; ++done) {
      out += s.substr(start, at - start) + with.s;
      start = at + old.s.size();
    }
    return Value::string(out + s.substr(start));
  }
  if (name == "lower") return Value::string(to_lower(s));
  if (name == "upper") return Value::string(to_upper(s));
  if (name == "title") return Value::string(to_title(s));
  if (name == "capitalize") return Value::string(capitalize(s));
  if (name == "format") {
    if (!a.keyword.empty()) fail("str.format with keyword fields is not supported by vkamp's renderer");
    return Value::string(python_format(s, a.positional));
  }
  if (name == "find" || name == "rfind" || name == "index") {
    const Value sub = a.need(0, "sub", name);
    if (!sub.is_string() || a.positional.size() > 1) fail("str." + name + " with these arguments is not supported by vkamp's renderer");
    const std::size_t at = name == "rfind" ? s.rfind(sub.s) : s.find(sub.s);
    if (at == std::string::npos && name == "index") fail("substring not found");
    return Value::integer(at == std::string::npos ? -1 : static_cast<int64_t>(code_points(s.substr(0, at)).size()));
  }
  if (name == "count") {
    const Value sub = a.need(0, "sub", name);
    if (!sub.is_string() || sub.s.empty()) fail("str.count with these arguments is not supported by vkamp's renderer");
    int64_t n = 0;
    for (std::size_t at = s.find(sub.s); at != std::string::npos; at = s.find(sub.s, at + sub.s.size())) ++n;
    return Value::integer(n);
  }
  if (name == "join") {
    std::string out;
    bool first = true;
    for (const Value& v : iterate(a.need(0, "iterable", name))) {
      if (!v.is_string()) fail("sequence item: expected str instance, " + type_name(v) + " found");
      out += (first ? "" : s) + v.s;
      first = false;
    }
    return Value::string(out);
  }
  if (name == "splitlines") {
    List lines;
    std::size_t start = 0;
    for (std::size_t k = 0; k < s.size(); ++k)
      if (s[k] == '\n' || s[k] == '\r') {
        lines.push_back(Value::string(s.substr(start, k - start)));
        if (s[k] == '\r' && k + 1 < s.size() && s[k + 1] == '\n') ++k;
        start = k + 1;
      }
    if (start < s.size()) lines.push_back(Value::string(s.substr(start)));
    return Value::make_list(std::move(lines));
  }
  if (name == "removeprefix" || name == "removesuffix") {
    const Value x = a.need(0, "prefix", name);
    if (!x.is_string()) fail(name + "() argument must be str");
    if (!affix(s, x, name == "removeprefix")) return Value::string(s);
    return Value::string(name == "removeprefix" ? s.substr(x.s.size()) : s.substr(0, s.size() - x.s.size()));
  }
  // The is* predicates over ASCII text; other text is refused rather than guessed.
  for (unsigned char c : s)
    if (c >= 0x80) fail("str." + name + "() of non-ASCII text is not supported by vkamp's renderer");
  auto all = [&](auto pred) { return !s.empty() && std::all_of(s.begin(), s.end(), [&](unsigned char c) { return pred(c) != 0; }); };
  if (name == "isdigit") return Value::boolean(all(::isdigit));
  if (name == "isspace") return Value::boolean(all(::isspace));
  if (name == "isalpha") return Value::boolean(all(::isalpha));
  if (name == "isalnum") return Value::boolean(all(::isalnum));
  const bool has_cased = std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::isalpha(c) != 0; });
  if (name == "islower") return Value::boolean(has_cased && to_lower(s) == s);
  if (name == "isupper") return Value::boolean(has_cased && to_upper(s) == s);
  fail("str." + name + "() is not supported by vkamp's renderer");
}

Value dict_method(const Value& d, const std::string& name, Args& a) {
  if (name == "get") {
    const Value key = a.need(0, "key", name);
    const Value* v = d.find_key(key);
    return v ? *v : a.get(1, "default", Value::none());
  }
  if (name == "copy") return Value::make_dict(*d.dict);
  List out;
  for (const auto& [k, v] : *d.dict) {
    if (name == "keys") out.push_back(k);
    else if (name == "values") out.push_back(v);
    else out.push_back(Value::make_list({k, v}, true));
  }
  return Value::make_list(std::move(out));
}

Value list_method(const Value& l, const std::string& name, Args& a) {
  if (name == "copy") return Value::make_list(*l.list, l.tuple);
  if (name == "pop") {
    if (l.tuple) fail("'tuple' object has no attribute 'pop'");
    if (l.list->empty()) fail("pop from empty list");
    int64_t k = a.get(0, "index", Value::integer(-1)).i;
    const auto n = static_cast<int64_t>(l.list->size());
    if (k < 0) k += n;
    if (k < 0 || k >= n) fail("pop index out of range");
    Value v = (*l.list)[static_cast<std::size_t>(k)];
    l.list->erase(l.list->begin() + k);
    return v;
  }
  const Value x = a.need(0, "value", name);
  int64_t count = 0;
  for (std::size_t k = 0; k < l.list->size(); ++k)
    if (equal((*l.list)[k], x)) {
      if (name == "index") return Value::integer(static_cast<int64_t>(k));
      ++count;
    }
  if (name == "index") fail(repr(x) + " is not in list");
  return Value::integer(count);
}


// markupsafe's Markup methods: string arguments are escaped, and the
// strings that come back are Markup.
Value markup_method(const Value& obj, const std::string& name, Args a) {
  auto escape = [](Value& v) {
    if (v.is_string() && !v.markup) v = Value::string(html_escape(v.s));
  };
  const bool escapes_args = name != "split" && name != "rsplit" && name != "splitlines" && name != "startswith" &&
                            name != "endswith" && name != "find" && name != "rfind" && name != "count" && name != "index";
  if (escapes_args) {
    for (Value& v : a.positional) escape(v);
    for (auto& kv : a.keyword) escape(kv.second);
    if (name == "join" && !a.positional.empty()) {
      List items = iterate(a.positional[0]);
      for (Value& v : items) escape(v);
      a.positional[0] = Value::make_list(std::move(items));
    }
  }
  Value out = string_method(obj.s, name, a);
  auto mark = [](Value& v) { v.markup = v.is_string(); };
  if (out.is_list())
    for (Value& v : *out.list) mark(v);
  else if (escapes_args || name == "split")
    mark(out);
  return out;
}

}  // namespace

bool known_method(const std::string& name) {
  return string_methods.count(name) || dict_methods.count(name) || list_methods.count(name) || unsafe_methods.count(name);
}

Value method_of(const Value& obj, const std::string& name) {
  const bool is_str = obj.is_string() && string_methods.count(name);
  const bool is_dict = obj.is_dict() && !obj.namespace_ && (dict_methods.count(name) || unsafe_methods.count(name) || name == "pop");
  const bool is_list = obj.is_list() && (list_methods.count(name) || unsafe_methods.count(name));
  if (!is_str && !is_dict && !is_list) return Value::undefined(name);
  if (unsafe_methods.count(name) || (is_dict && name == "pop"))
    return Value::function([name, type = type_name(obj)](Args&) -> Value {
      fail("access to attribute '" + name + "' of '" + type + "' object is unsafe");
    });
  return Value::function([obj, name](Args& a) {
    if (obj.is_string() && obj.markup) return markup_method(obj, name, a);
    if (obj.is_string()) return string_method(obj.s, name, a);
    if (obj.is_dict()) return dict_method(obj, name, a);
    return list_method(obj, name, a);
  });
}

}  // namespace vkamp::chat
