// Text as Python writes it, where a template's output depends on it:
// repr() of strings and floats, json.dumps (transformers' tojson), str.format
// with {} fields, and datetime.strftime.
#pragma once
#include <ctime>
#include <string>

#include "value.hpp"

namespace vkamp::chat {

std::string python_string_repr(const std::string& s);
// repr(float): the shortest digits that read back, fixed between 1e-4 and 1e16.
std::string python_float_repr(double x);

struct JsonStyle {
  bool ensure_ascii = false;
  int indent = -1;  // none
  std::string item_separator, key_separator;  // as json.dumps defaults them when empty
  bool separators_given = false;
  bool sort_keys = false;
};
// json.dumps(v, ...); throws RenderError on what JSON cannot hold.
std::string json_dumps(const Value& v, const JsonStyle& style);

// markupsafe's escape (what Markup + str applies to the str).
std::string html_escape(const std::string& s);

// format_string.format(*args) for "{}" and "{0}" fields.
std::string python_format(const std::string& format_string, const std::vector<Value>& args);

// format_string % args for %s, %r, %d, %i and %% (args a tuple, or one
// value); throws RenderError on other conversions.
std::string python_percent(const std::string& format_string, const Value& args);

// time.strftime(format) of `now` for the directives templates use (%Y %m %d
// %b %B %a %A %H %M %S %y %p %%); throws RenderError on others.
std::string python_strftime(const std::string& format, const std::tm& now);

}  // namespace vkamp::chat
