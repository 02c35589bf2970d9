#include "vkamp/data/class_ids.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

#include "vkamp/data/data_error.hpp"

namespace vkamp::data {
namespace {

// The value of a label made only of decimal digits; nullopt for anything
// else ("-1", "1.0", " 3", "").
std::optional<uint64_t> non_negative_integer(const std::string& s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + uint64_t(c - '0');
  }
  return v;
}

// The whole string as a finite number ("151.0", "1e2", " 3"), else nullopt.
std::optional<double> finite_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string quoted_list(const std::vector<std::string>& names) {
  constexpr size_t kShown = 20;
  std::string s;
  for (size_t i = 0; i < names.size() && i < kShown; ++i) s += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > kShown) s += ", ... (" + std::to_string(names.size()) + " in all)";
  return s;
}

ClassIds by_given_list(const std::vector<std::string>& labels, const std::vector<std::string>& given,
                       const std::function<std::string(size_t)>& where) {
  std::map<std::string, uint32_t> id_of;
  for (size_t i = 0; i < given.size(); ++i) id_of.emplace(given[i], uint32_t(i));  // first wins
  ClassIds out{{}, given};
  out.ids.reserve(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    auto it = id_of.find(labels[i]);
    if (it == id_of.end())
      throw DataError(where(i) + ": label '" + labels[i] + "' is not one of the " +
                             std::to_string(given.size()) + " classes (" + quoted_list(given) + ")");
    out.ids.push_back(it->second);
  }
  return out;
}

}  // namespace

ClassIds number_classes(const std::vector<std::string>& labels, const std::vector<std::string>& given,
                        const std::function<std::string(size_t)>& where) {
  for (size_t i = 0; i < labels.size(); ++i)
    if (is_blank_label(labels[i])) throw DataError(where(i) + ": the label is empty; " + kUnlabelledAdvice);
  if (!given.empty()) return by_given_list(labels, given, where);

  std::vector<uint64_t> integers;
  integers.reserve(labels.size());
  for (const std::string& l : labels) {
    std::optional<uint64_t> v = non_negative_integer(l);
    if (!v) break;
    integers.push_back(*v);
  }
  ClassIds out;
  if (integers.size() == labels.size()) {
    uint64_t max = 0;
    for (size_t i = 0; i < integers.size(); ++i) {
      if (integers[i] > kMaxIntegerClass)
        throw DataError(where(i) + ": label " + labels[i] + " is too large a class id (integer labels " +
                               "are class ids 0 .. max, and at most " + std::to_string(kMaxIntegerClass) +
                               " is allowed)");
      max = std::max(max, integers[i]);
    }
    out.ids.assign(integers.begin(), integers.end());
    if (!labels.empty())
      for (uint64_t c = 0; c <= max; ++c) out.classes.push_back(std::to_string(c));
    return out;
  }

  out.classes = labels;
  std::sort(out.classes.begin(), out.classes.end());
  out.classes.erase(std::unique(out.classes.begin(), out.classes.end()), out.classes.end());
  return by_given_list(labels, out.classes, where);
}

std::string continuous_label_reason(const std::vector<std::string>& classes, const std::vector<uint32_t>& ids) {
  if (classes.empty() || ids.empty()) return "";
  std::vector<bool> used(classes.size(), false);
  for (uint32_t id : ids)
    if (id < used.size()) used[id] = true;
  size_t distinct = 0;
  std::string fractional;
  for (size_t c = 0; c < classes.size(); ++c) {
    if (!used[c]) continue;
    ++distinct;
    const std::optional<double> v = finite_number(classes[c]);
    if (!v) return "";  // a name: these are classes
    if (fractional.empty() && *v != std::floor(*v)) fractional = classes[c];
  }
  if (!fractional.empty()) return "'" + fractional + "' is not a whole number";
  if (distinct > kMaxDiscreteValues && distinct * kMinRowsPerValue > ids.size())
    return std::to_string(distinct) + " distinct values over " + std::to_string(ids.size()) + " rows";
  return "";
}

}  // namespace vkamp::data
