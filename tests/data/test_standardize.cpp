// Standardisation: mean and population std per column against a direct
// double computation on fresh random data, constant columns, and the JSON
// form it is saved in.
#include "vkamp/data/standardize.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "data/data_files.hpp"
#include "support/numerics.hpp"

namespace {

using vkamp::data::Standardizer;
using vkamp::test::data_rejected;

TEST(Standardize, FitMatchesADirectComputation) {
  std::mt19937_64& rng = vkamp::test::rng();  // seeded per test; VKAMP_TEST_SEED replays
  vkamp::data::HostData d;
  d.count = 2 + uint32_t(rng() % 200);
  d.features = 1 + uint32_t(rng() % 6);
  std::vector<double> center(d.features), spread(d.features);
  for (uint32_t j = 0; j < d.features; ++j) {
    // Spreads from 0.05 to 150, centres up to a few spreads away: floats
    // resolve every value to far better than the spread.
    spread[j] = std::exp(std::uniform_real_distribution<double>(-3, 5)(rng));
    center[j] = std::normal_distribution<double>(0, 3 * spread[j])(rng);
  }
  for (uint32_t i = 0; i < d.count; ++i)
    for (uint32_t j = 0; j < d.features; ++j)
      d.x.push_back(float(center[j] + spread[j] * std::normal_distribution<double>()(rng)));

  const Standardizer s = Standardizer::fit(d);
  for (uint32_t j = 0; j < d.features; ++j) {
    double mean = 0, var = 0;
    for (uint32_t i = 0; i < d.count; ++i) mean += d.x[i * d.features + j];
    mean /= d.count;
    for (uint32_t i = 0; i < d.count; ++i) var += std::pow(d.x[i * d.features + j] - mean, 2);
    const double sd = std::sqrt(var / d.count);
    EXPECT_EQ(s.mean[j], float(mean)) << j;
    EXPECT_NEAR(s.std[j], sd, 1e-6 * sd) << j;
  }

  vkamp::data::HostData scaled = d;
  s.apply(scaled);
  const Standardizer again = Standardizer::fit(scaled);
  for (uint32_t j = 0; j < d.features; ++j) {
    EXPECT_NEAR(again.mean[j], 0.0, 1e-3) << j;
    EXPECT_NEAR(again.std[j], 1.0, 1e-3) << j;
  }
}

TEST(Standardize, ConstantColumnGetsStdOne) {
  vkamp::data::HostData d{3, 2, {5, 1, 5, 2, 5, 3}, {}, {}};
  const Standardizer s = Standardizer::fit(d);
  EXPECT_EQ(s.mean, (std::vector<float>{5, 2}));
  EXPECT_EQ(s.std[0], 1.f);
  s.apply(d);
  EXPECT_EQ(d.x[0], 0.f);
  EXPECT_EQ(d.x[2], 0.f);
  EXPECT_TRUE(std::isfinite(d.x[1]));
}

// Regression targets (--standardize-target): fitted per target column,
// applied, and undone to the original values (prediction's outputs).
TEST(Standardize, TargetsScaleAndComeBack) {
  std::mt19937_64& rng = vkamp::test::rng();
  vkamp::data::HostData d;
  d.count = 2 + uint32_t(rng() % 300);
  d.features = 1;
  d.x.assign(d.count, 0.f);
  for (uint32_t i = 0; i < d.count; ++i) {
    d.targets.push_back(float(std::normal_distribution<double>(1.5e5, 4e4)(rng)));  // prices
    d.targets.push_back(float(std::normal_distribution<double>(-2, 0.01)(rng)));
  }
  const std::vector<float> original = d.targets;
  const Standardizer s = Standardizer::fit_targets(d);
  ASSERT_EQ(s.mean.size(), 2u);
  // The mean of `count` draws of sd 4e4 errs by 4e4 / sqrt(count) as one
  // standard deviation (a count of 2 drew 1.02 sd of 1.5e5 - 40,940 once):
  // six of them.
  EXPECT_NEAR(s.mean[0], 1.5e5, 6 * 4e4 / std::sqrt(double(d.count)));
  s.apply_targets(d);
  const Standardizer again = Standardizer::fit_targets(d);
  for (int j = 0; j < 2; ++j) {
    EXPECT_NEAR(again.mean[j], 0.0, 1e-4) << j;
    EXPECT_NEAR(again.std[j], 1.0, 1e-4) << j;
  }
  std::vector<float> back = d.targets;
  s.undo(back);
  for (size_t i = 0; i < back.size(); ++i)
    EXPECT_NEAR(back[i], original[i], 4 * std::numeric_limits<float>::epsilon() * std::fabs(original[i])) << i;
  vkamp::data::HostData one{1, 1, {0}, {}, {1}};
  EXPECT_TRUE(data_rejected([&] { s.apply_targets(one); }, "target standardizer", "fitted on 2 targets"));
}

TEST(Standardize, JsonRoundTripsExactly) {
  Standardizer s{{0.1f, -3e7f, 1e-30f}, {0.3f, 2.5f, 7e20f}};
  const Standardizer back = Standardizer::from_json(s.to_json());
  EXPECT_EQ(back.mean, s.mean);
  EXPECT_EQ(back.std, s.std);
}

TEST(Standardize, Errors) {
  EXPECT_TRUE(data_rejected([] { Standardizer::from_json("{"); }, "standardizer", "not valid JSON"));
  EXPECT_TRUE(data_rejected([] { Standardizer::from_json(R"({"mean": [1]})"); }, "standardizer", "'std'"));
  EXPECT_TRUE(data_rejected([] { Standardizer::from_json(R"([1, 2])"); }, "standardizer", "'mean'"));
  EXPECT_TRUE(data_rejected([] { Standardizer::from_json(R"({"mean": [1, 2], "std": [1]})"); }, "standardizer",
                            "2 means but 1 standard deviations"));
  EXPECT_TRUE(data_rejected([] { Standardizer::from_json(R"({"mean": [1], "std": [0]})"); }, "standardizer",
                            "positive expected"));
  EXPECT_TRUE(data_rejected([] { Standardizer::from_json(R"({"mean": ["a"], "std": [1]})"); }, "standardizer",
                            "non-number"));
  vkamp::data::HostData d{1, 3, {1, 2, 3}, {}, {}};
  EXPECT_TRUE(data_rejected([&] { Standardizer{{0}, {1}}.apply(d); }, "standardizer", "fitted on 1 features"));
}

}  // namespace
