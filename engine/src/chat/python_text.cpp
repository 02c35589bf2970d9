#include "python_text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace vkamp::chat {
namespace {

// The code point of the UTF-8 sequence at s[k] and its length.
uint32_t decode_at(const std::string& s, std::size_t k, std::size_t& n) {
  const auto c = static_cast<unsigned char>(s[k]);
  if (c < 0x80) {
    n = 1;
    return c;
  }
  n = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  uint32_t cp = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
  for (std::size_t j = 1; j < n && k + j < s.size(); ++j) cp = (cp << 6) | (static_cast<unsigned char>(s[k + j]) & 0x3F);
  return cp;
}

std::string hex(uint32_t v, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%0*x", digits, v);
  return buf;
}

// Python's str.isprintable() for the code points templates meet: controls,
// Latin-1's no-break space and soft hyphen, and the line separators are not.
bool printable(uint32_t cp) {
  return !(cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD || cp == 0x2028 || cp == 0x2029 ||
           (cp >= 0x200B && cp <= 0x200F) || cp == 0xFEFF);
}

}  // namespace

std::string python_string_repr(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos, has_double = s.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (std::size_t k = 0; k < s.size();) {
    std::size_t n;
    const uint32_t cp = decode_at(s, k, n);
    if (cp == static_cast<uint32_t>(quote) || cp == '\\') out += std::string("\\") + static_cast<char>(cp);
    else if (cp == '\n') out += "\\n";
    else if (cp == '\r') out += "\\r";
    else if (cp == '\t') out += "\\t";
    else if (!printable(cp)) out += cp < 0x100 ? "\\x" + hex(cp, 2) : cp < 0x10000 ? "\\u" + hex(cp, 4) : "\\U" + hex(cp, 8);
    else out += s.substr(k, n);
    k += n;
  }
  return out + quote;
}

std::string python_float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  if (x == 0) return std::signbit(x) ? "-0.0" : "0.0";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  const std::string sci(buf, r.ptr);  // "-d.ddde+XX": the shortest digits that read back
  const std::size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e))
    if (c >= '0' && c <= '9') digits += c;
  const int exponent = std::stoi(sci.substr(e + 1));
  const int point = exponent + 1;  // digits = 0.d1d2... * 10^point
  std::string out = x < 0 ? "-" : "";
  if (point > -4 && point <= 16) {
    if (point <= 0) {
      out += "0." + std::string(-point, '0') + digits;
    } else if (static_cast<std::size_t>(point) >= digits.size()) {
      out += digits + std::string(point - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, point) + "." + digits.substr(point);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  const int shown = point - 1;
  out += shown < 0 ? "e-" : "e+";
  const std::string mag = std::to_string(std::abs(shown));
  return out + (mag.size() < 2 ? "0" : "") + mag;
}

namespace {

std::string json_string(const std::string& s, bool ensure_ascii) {
  std::string out = "\"";
  for (std::size_t k = 0; k < s.size();) {
    std::size_t n;
    const uint32_t cp = decode_at(s, k, n);
    switch (cp) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (cp < 0x20) {
          out += "\\u" + hex(cp, 4);
        } else if (ensure_ascii && cp >= 0x80) {
          if (cp >= 0x10000) {  // a surrogate pair, as json.dumps writes it
            const uint32_t v = cp - 0x10000;
            out += "\\u" + hex(0xD800 + (v >> 10), 4) + "\\u" + hex(0xDC00 + (v & 0x3FF), 4);
          } else {
            out += "\\u" + hex(cp, 4);
          }
        } else {
          out += s.substr(k, n);
        }
    }
    k += n;
  }
  return out + "\"";
}

// json.dumps writes a non-string key as the JSON text of it, in quotes.
std::string json_key(const Value& k) {
  switch (k.kind) {
    case Value::Kind::String: return k.s;
    case Value::Kind::Int: return std::to_string(k.i);
    case Value::Kind::Float: return python_float_repr(k.f);
    case Value::Kind::Bool: return k.b ? "true" : "false";
    case Value::Kind::None: return "null";
    default: fail("keys must be str, int, float, bool or None, not " + type_name(k));
  }
}

void dump(const Value& v, const JsonStyle& st, int level, std::string& out) {
  const std::string item_sep = st.separators_given ? st.item_separator : st.indent >= 0 ? "," : ", ";
  const std::string key_sep = st.separators_given ? st.key_separator : ": ";
  auto newline = [&](int lvl) {
    if (st.indent >= 0) out += "\n" + std::string(static_cast<std::size_t>(st.indent * lvl), ' ');
  };
  switch (v.kind) {
    case Value::Kind::None: out += "null"; return;
    case Value::Kind::Bool: out += v.b ? "true" : "false"; return;
    case Value::Kind::Int: out += std::to_string(v.i); return;
    case Value::Kind::Float:
      out += std::isnan(v.f) ? "NaN" : std::isinf(v.f) ? (v.f < 0 ? "-Infinity" : "Infinity") : python_float_repr(v.f);
      return;
    case Value::Kind::String: out += json_string(v.s, st.ensure_ascii); return;
    case Value::Kind::List: {
      if (v.generator) break;
      if (v.list->empty()) {
        out += "[]";
        return;
      }
      out += "[";
      for (std::size_t k = 0; k < v.list->size(); ++k) {
        if (k) out += item_sep;
        newline(level + 1);
        dump((*v.list)[k], st, level + 1, out);
      }
      newline(level);
      out += "]";
      return;
    }
    case Value::Kind::Dict: {
      if (v.namespace_) break;
      if (v.dict->empty()) {
        out += "{}";
        return;
      }
      std::vector<const std::pair<Value, Value>*> items;
      for (const auto& kv : *v.dict) items.push_back(&kv);
      if (st.sort_keys)
        std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return less(a->first, b->first); });
      out += "{";
      for (std::size_t k = 0; k < items.size(); ++k) {
        if (k) out += item_sep;
        newline(level + 1);
        out += json_string(json_key(items[k]->first), st.ensure_ascii) + key_sep;
        dump(items[k]->second, st, level + 1, out);
      }
      newline(level);
      out += "}";
      return;
    }
    default: break;
  }
  fail("Object of type " + type_name(v) + " is not JSON serializable");
}

}  // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string json_dumps(const Value& v, const JsonStyle& style) {
  std::string out;
  dump(v, style, 0, out);
  return out;
}

std::string python_format(const std::string& f, const std::vector<Value>& args) {
  std::string out;
  std::size_t next = 0;
  for (std::size_t k = 0; k < f.size(); ++k) {
    if (f[k] == '{' && k + 1 < f.size() && f[k + 1] == '{') {
      out += '{';
      ++k;
    } else if (f[k] == '}' && k + 1 < f.size() && f[k + 1] == '}') {
      out += '}';
      ++k;
    } else if (f[k] == '{') {
      const std::size_t close = f.find('}', k);
      if (close == std::string::npos) fail("Single '{' encountered in format string");
      const std::string field = f.substr(k + 1, close - k - 1);
      std::size_t index = next++;
      if (!field.empty()) {
        if (field.find_first_not_of("0123456789") != std::string::npos)
          fail("str.format field {" + field + "} is not supported by vkamp's renderer");
        index = std::stoul(field);
      }
      if (index >= args.size()) fail("Replacement index " + std::to_string(index) + " out of range");
      out += to_str(args[index]);
      k = close;
    } else if (f[k] == '}') {
      fail("Single '}' encountered in format string");
    } else {
      out += f[k];
    }
  }
  return out;
}

std::string python_percent(const std::string& f, const Value& args) {
  const List values = args.is_list() && args.tuple ? *args.list : List{args};
  std::string out;
  std::size_t next = 0;
  for (std::size_t k = 0; k < f.size(); ++k) {
    if (f[k] != '%') {
      out += f[k];
      continue;
    }
    if (k + 1 == f.size()) fail("incomplete format");
    const char c = f[++k];
    if (c == '%') {
      out += '%';
      continue;
    }
    if (c != 's' && c != 'r' && c != 'd' && c != 'i')
      fail(std::string("the % conversion %") + c + " is not supported by vkamp's renderer");
    if (next >= values.size()) fail("not enough arguments for format string");
    const Value& v = values[next++];
    if (c == 's') out += to_str(v);
    else if (c == 'r') out += repr(v);
    else if (v.is_number()) out += std::to_string(static_cast<int64_t>(as_double(v)));
    else fail("%d format: a real number is required, not " + type_name(v));
  }
  if (next < values.size()) fail("not all arguments converted during string formatting");
  return out;
}

std::string python_strftime(const std::string& format, const std::tm& now) {
  static const char* const months[] = {"January", "February", "March",     "April",   "May",      "June",
                                       "July",    "August",   "September", "October", "November", "December"};
  static const char* const days[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
  auto two = [](int v) { return (v < 10 ? "0" : "") + std::to_string(v); };
  std::string out;
  for (std::size_t k = 0; k < format.size(); ++k) {
    if (format[k] != '%' || k + 1 == format.size()) {
      out += format[k];
      continue;
    }
    const char d = format[++k];
    switch (d) {
      case 'Y': out += std::to_string(now.tm_year + 1900); break;
      case 'y': out += two(now.tm_year % 100); break;
      case 'm': out += two(now.tm_mon + 1); break;
      case 'd': out += two(now.tm_mday); break;
      case 'B': out += months[now.tm_mon]; break;
      case 'b': out += std::string(months[now.tm_mon]).substr(0, 3); break;
      case 'A': out += days[now.tm_wday]; break;
      case 'a': out += std::string(days[now.tm_wday]).substr(0, 3); break;
      case 'H': out += two(now.tm_hour); break;
      case 'M': out += two(now.tm_min); break;
      case 'S': out += two(now.tm_sec); break;
      case 'p': out += now.tm_hour < 12 ? "AM" : "PM"; break;
      case '%': out += '%'; break;
      default: fail(std::string("strftime directive %") + d + " is not supported by vkamp's renderer");
    }
  }
  return out;
}

}  // namespace vkamp::chat
