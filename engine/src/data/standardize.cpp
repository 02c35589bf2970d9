#include "vkamp/data/standardize.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "vkamp/data/data_error.hpp"

namespace vkamp::data {

Standardizer Standardizer::fit(const HostData& d) {
  const size_t f = d.features;
  std::vector<double> sum(f, 0.0), sum_sq(f, 0.0);
  for (size_t i = 0; i < d.count; ++i)
    for (size_t j = 0; j < f; ++j) sum[j] += d.x[i * f + j];
  Standardizer s;
  s.mean.resize(f);
  s.std.resize(f);
  const double n = d.count ? double(d.count) : 1.0;
  for (size_t j = 0; j < f; ++j) sum[j] /= n;  // now the mean
  // Two passes: squares of deviations, not E[x^2] - E[x]^2, which cancels
  // badly when the mean is large against the spread.
  for (size_t i = 0; i < d.count; ++i)
    for (size_t j = 0; j < f; ++j) {
      const double dev = d.x[i * f + j] - sum[j];
      sum_sq[j] += dev * dev;
    }
  for (size_t j = 0; j < f; ++j) {
    const double sd = std::sqrt(sum_sq[j] / n);
    s.mean[j] = static_cast<float>(sum[j]);
    s.std[j] = sd > 0 ? static_cast<float>(sd) : 1.0f;  // constant column: see the header
  }
  return s;
}

void Standardizer::apply(HostData& d) const {
  if (d.features != mean.size())
    throw DataError("standardizer: fitted on " + std::to_string(mean.size()) +
                           " features, the data has " + std::to_string(d.features));
  const size_t f = d.features;
  for (size_t i = 0; i < d.count; ++i)
    for (size_t j = 0; j < f; ++j) {
      float& v = d.x[i * f + j];
      v = static_cast<float>((double(v) - mean[j]) / std[j]);
    }
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
