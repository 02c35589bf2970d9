#include "vkamp/data/standardize.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "vkamp/data/data_error.hpp"

namespace vkamp::data {

Standardizer Standardizer::fit(std::span<const float> table, size_t f) {
  const size_t count = f ? table.size() / f : 0;
  std::vector<double> sum(f, 0.0), sum_sq(f, 0.0);
  for (size_t i = 0; i < count; ++i)
    for (size_t j = 0; j < f; ++j) sum[j] += table[i * f + j];
  Standardizer s;
  s.mean.resize(f);
  s.std.resize(f);
  const double n = count ? double(count) : 1.0;
  for (size_t j = 0; j < f; ++j) sum[j] /= n;  // now the mean
  // Two passes: squares of deviations, not E[x^2] - E[x]^2, which cancels
  // badly when the mean is large against the spread.
  for (size_t i = 0; i < count; ++i)
    for (size_t j = 0; j < f; ++j) {
      const double dev = table[i * f + j] - sum[j];
      sum_sq[j] += dev * dev;
    }
  for (size_t j = 0; j < f; ++j) {
    const double sd = std::sqrt(sum_sq[j] / n);
    s.mean[j] = static_cast<float>(sum[j]);
    s.std[j] = sd > 0 ? static_cast<float>(sd) : 1.0f;  // constant column: see the header
  }
  return s;
}

Standardizer Standardizer::fit(const HostData& d) {
  return fit(std::span<const float>(d.x.data(), size_t(d.count) * d.features), d.features);
}

Standardizer Standardizer::fit_targets(const HostData& d) {
  return fit(d.targets, d.count ? d.targets.size() / d.count : 0);
}

void Standardizer::apply(std::span<float> table) const {
  const size_t f = mean.size();
  for (size_t i = 0; f && i < table.size() / f; ++i)
    for (size_t j = 0; j < f; ++j) {
      float& v = table[i * f + j];
      v = static_cast<float>((double(v) - mean[j]) / std[j]);
    }
}

void Standardizer::undo(std::span<float> table) const {
  const size_t f = mean.size();
  for (size_t i = 0; f && i < table.size() / f; ++i)
    for (size_t j = 0; j < f; ++j) {
      float& v = table[i * f + j];
      v = static_cast<float>(double(v) * std[j] + mean[j]);
    }
}

void Standardizer::apply(HostData& d) const {
  if (d.features != mean.size())
    throw DataError("standardizer: fitted on " + std::to_string(mean.size()) +
                           " features, the data has " + std::to_string(d.features));
  apply(std::span<float>(d.x.data(), size_t(d.count) * d.features));
}

void Standardizer::apply_targets(HostData& d) const {
  const size_t width = d.count ? d.targets.size() / d.count : 0;
  if (width != mean.size())
    throw DataError("target standardizer: fitted on " + std::to_string(mean.size()) + " targets, the data has " +
                    std::to_string(width));
  apply(d.targets);
}

std::string Standardizer::to_json() const { return nlohmann::json{{"mean", mean}, {"std", std}}.dump(); }

Standardizer Standardizer::from_json(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw DataError(std::string("standardizer: not valid JSON: ") + e.what());
  }
  auto column = [&](const char* key) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_array())
      throw DataError(std::string("standardizer: '") + key + "' (an array of numbers) expected");
    std::vector<float> v;
    for (const auto& e : j[key]) {
      if (!e.is_number()) throw DataError(std::string("standardizer: '") + key + "' holds a non-number");
      v.push_back(e.get<float>());
    }
    return v;
  };
  Standardizer s{column("mean"), column("std")};
  if (s.mean.size() != s.std.size())
    throw DataError("standardizer: " + std::to_string(s.mean.size()) + " means but " +
                           std::to_string(s.std.size()) + " standard deviations");
  for (float sd : s.std)
    if (!(sd > 0) || !std::isfinite(sd))
      throw DataError("standardizer: a standard deviation of " + std::to_string(sd) + "; positive expected");
  return s;
}

}  // namespace vkamp::data
