// The strict value parsers every setting row uses, and the wording of
// ranges and names in their messages.
#include <cctype>
#include <charconv>
#include <cmath>
#include <sstream>
#include <system_error>

#include "vkamp/config/setting.hpp"

namespace vkamp::config {

void fail(const std::string& label, const std::string& msg) { throw ConfigError(label + ": " + msg); }

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string fmt(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string flag_of(const std::string& key) {
  std::string f = "--";
  for (char c : key) f += (c == '_') ? '-' : c;
  return f;
}

std::string names(const std::string& key) { return flag_of(key) + " (" + key + ")"; }

double parse_double(const std::string& v, const std::string& label) {
  const char* b = v.data();
  const char* e = b + v.size();
  if (b != e && *b == '+' && b + 1 != e && b[1] != '-') ++b;  // from_chars rejects a leading '+'
  double out = 0;
  auto [p, ec] = std::from_chars(b, e, out, std::chars_format::general);
  if (v.empty() || b == e || ec == std::errc::invalid_argument || p != e)
    fail(label, "'" + v + "' is not a number");
  if (ec == std::errc::result_out_of_range) fail(label, "'" + v + "' is out of the range of a double");
  if (!std::isfinite(out)) fail(label, "'" + v + "' is not a finite number");
  return out;
}

uint64_t parse_u64(const std::string& v, const std::string& label) {
  const char* b = v.data();
  const char* e = b + v.size();
  if (b != e && *b == '+' && b + 1 != e && b[1] != '-') ++b;
  uint64_t out = 0;
  auto [p, ec] = std::from_chars(b, e, out, 10);
  if (!v.empty() && v[0] == '-') fail(label, "'" + v + "' is negative; expected a whole number >= 0");
  if (v.empty() || b == e || ec == std::errc::invalid_argument || p != e)
    fail(label, "'" + v + "' is not a whole number");
  if (ec == std::errc::result_out_of_range) fail(label, "'" + v + "' is too large");
  return out;
}

uint32_t parse_u32(const std::string& v, const std::string& label, uint32_t min) {
  const uint64_t x = parse_u64(v, label);
  constexpr uint32_t kMax = std::numeric_limits<uint32_t>::max();
  if (x > kMax) fail(label, "'" + v + "' is too large (at most " + std::to_string(kMax) + ")");
  if (x < min) fail(label, "must be >= " + std::to_string(min) + " (got " + v + ")");
  return static_cast<uint32_t>(x);
}

bool parse_bool(const std::string& v, const std::string& label) {
  const std::string s = lower(v);
  if (s == "true" || s == "yes" || s == "on" || s == "1") return true;
  if (s == "false" || s == "no" || s == "off" || s == "0") return false;
  fail(label, "'" + v + "' is not a boolean (expected true or false)");
}

bool Range::contains(double x) const {
  if (!std::isfinite(x)) return false;
  const bool above_lo = lo_open ? x > lo : x >= lo;
  const bool below_hi = hi_open ? x < hi : x <= hi;
  return above_lo && below_hi;
}

std::string Range::text() const {
  const bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
  if (has_lo && has_hi)
    return std::string("in ") + (lo_open ? "(" : "[") + fmt(lo) + ", " + fmt(hi) + (hi_open ? ")" : "]");
  if (has_lo) return (lo_open ? "> " : ">= ") + fmt(lo);
  if (has_hi) return (hi_open ? "< " : "<= ") + fmt(hi);
  return "finite";
}

}  // namespace vkamp::config
