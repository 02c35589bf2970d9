// The settings-file reader: splits `key: value` lines, strips comments and
// quotes, and reports every problem with the file and line.
#include "vkamp/train/settings_file.hpp"

#include "vkamp/train/setting.hpp"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <string_view>

namespace vkamp::train {
namespace {

// "value" / 'value' -> value; "FILE:LINE: ..." is added by the caller.
std::string unquote(const std::string& v) {
  if (v.empty() || (v[0] != '"' && v[0] != '\'')) return v;
  char q = v[0];
  std::string out;
  size_t i = 1;
  for (; i < v.size(); ++i) {
    char ch = v[i];
    if (q == '\'' && ch == '\'') {
      if (i + 1 < v.size() && v[i + 1] == '\'') {  // '' is a quote inside '...'
        out += '\'';
        ++i;
        continue;
      }
      break;
    }
    if (q == '"' && ch == '\\' && i + 1 < v.size()) {
      char n = v[++i];
      switch (n) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case '"':
        case '\\':
        case '/': out += n; break;
        default: throw ConfigError(std::string("unsupported escape \\") + n + " in a quoted value");
      }
      continue;
    }
    if (q == '"' && ch == '"') break;
    out += ch;
  }
  if (i >= v.size()) throw ConfigError(std::string("unterminated ") + q + "quoted" + q + " value");
  if (i + 1 != v.size()) throw ConfigError("unexpected text after the closing quote: " + v.substr(i + 1));
  return out;
}

// Cuts a '#' comment that starts the line or follows whitespace, outside quotes.
std::string strip_comment(const std::string& line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char ch = line[i];
    if (quote) {
      if (quote == '"' && ch == '\\')
        ++i;
      else if (ch == quote)
        quote = 0;
    } else if (ch == '"' || ch == '\'') {
      // Quotes only open a quoted scalar at the start of the value.
      size_t j = i;
      while (j > 0 && (line[j - 1] == ' ' || line[j - 1] == '\t')) --j;
      if (j > 0 && line[j - 1] == ':') quote = ch;
    } else if (ch == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
      return line.substr(0, i);
    }
  }
  return line;
}

bool valid_key(const std::string& k) {
  if (k.empty()) return false;
  for (char c : k)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

}  // namespace

void read_settings_file(const std::string& path, const std::function<std::string(const std::string&)>& canonical,
                        const std::function<void(const std::string&, const std::string&)>& apply) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    throw ConfigError("cannot read config file '" + path +
                      "': " + (err ? std::strerror(err) : "open failed"));
  }
  std::map<std::string, int> seen;  // canonical key -> line it was set on
  std::string line;
  int lineno = 0;
  auto where = [&] { return path + ":" + std::to_string(lineno) + ": "; };
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (lineno == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // UTF-8 BOM
    std::string text = strip_comment(line);
    std::string t = trim(text);
    if (t.empty() || t == "---" || t == "...") continue;
    if (text[0] == ' ' || text[0] == '\t')
      throw ConfigError(
          where() +
          "indented line: nested YAML is not supported, write 'key: value' at the start of the line");
    if (t[0] == '-') throw ConfigError(where() + "YAML lists are not supported, write 'key: value'");
    size_t colon = std::string::npos;
    for (size_t i = 0; i < t.size(); ++i)
      if (t[i] == ':' && (i + 1 == t.size() || t[i + 1] == ' ' || t[i + 1] == '\t')) {
        colon = i;
        break;
      }
    if (colon == std::string::npos)
      throw ConfigError(where() + "expected 'key: value' (with a space after the colon), got '" + t + "'");
    std::string key = trim(std::string_view(t).substr(0, colon));
    std::string raw = trim(std::string_view(t).substr(colon + 1));
    if (!valid_key(key)) throw ConfigError(where() + "'" + key + "' is not a valid key");
    std::string setting;
    try {
      setting = canonical(key);
    } catch (const ConfigError& e) {
      throw ConfigError(where() + e.what());
    }
    if (raw.empty())
      throw ConfigError(where() + key + ": no value (write " + key + ": VALUE, or \"\" for an empty string)");
    std::string value;
    try {
      value = unquote(raw);
    } catch (const ConfigError& e) {
      throw ConfigError(where() + key + ": " + e.what());
    }
    auto [it, inserted] = seen.emplace(setting, lineno);
    if (!inserted)
      throw ConfigError(where() + key + ": set twice (first on line " + std::to_string(it->second) + ")");
    try {
      apply(key, value);
    } catch (const ConfigError& e) {
      throw ConfigError(where() + e.what());
    }
  }
  if (in.bad()) throw ConfigError("error while reading config file '" + path + "'");
}

}  // namespace vkamp::train
