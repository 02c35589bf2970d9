// The --metrics JSON Lines file: every record parses as JSON (nlohmann),
// strings are escaped, inf and NaN are null, and the fields keep their order.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vkamp/io/metrics_log.hpp"

namespace vkamp::io {
namespace {

using Json = nlohmann::ordered_json;
using train::EpochEnd;
using train::StepMetrics;
using train::TensorHistogram;

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

std::vector<std::string> keys_of(const Json& j) {
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  return keys;
}

TEST(MetricsLog, OddTensorNamesAndNonFiniteNumbersRoundTripAsJson) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("vkamp-metrics-" + std::to_string(getpid()) + ".jsonl")).string();
  const std::string name = "fc1.\"weight\"\\grad\n\t\x01";
  {
    MetricsLog log(path);
    StepMetrics m;
    m.step = 7;
    m.loss = std::numeric_limits<float>::quiet_NaN();  // an overflowed step
    m.loss_scale = 32768;
    m.skipped = m.overflow = true;
    m.grad_norm = std::numeric_limits<float>::infinity();
    m.lr = 0.5f;
    m.retries = 2;
    m.step_time_ms = 1.25;
    log.write(m);
    TensorHistogram h;
    h.step = 7;
    h.tensor = name;
    h.loss_scale = 32768;
    h.bins[0] = 3;
    log.write(h);
    EpochEnd e;
    e.epoch = 1;
    e.step = 8;
    e.metric = "accuracy";
    e.value = -std::numeric_limits<double>::infinity();
    log.write(e);
  }
  const std::vector<std::string> lines = lines_of(path);
  std::filesystem::remove(path);
  ASSERT_EQ(lines.size(), 3u);

  const Json step = Json::parse(lines[0]);
  EXPECT_EQ(keys_of(step), (std::vector<std::string>{"step", "loss", "loss_scale", "skipped", "overflow", "grad_norm",
                                                     "lr", "retries", "step_time"}));
  EXPECT_EQ(step["step"], 7);
  EXPECT_TRUE(step["loss"].is_null()) << lines[0];
  EXPECT_TRUE(step["grad_norm"].is_null()) << lines[0];
  EXPECT_EQ(step["loss_scale"].get<double>(), 32768.0);
  EXPECT_EQ(step["skipped"], true);
  EXPECT_EQ(step["lr"].get<double>(), 0.5);
  EXPECT_EQ(step["retries"], 2);
  EXPECT_EQ(step["step_time"].get<double>(), 1.25);
  // The layout tools and older tests read: ", " and ": " between fields.
  EXPECT_EQ(lines[0].rfind("{\"step\": 7, \"loss\": null, \"loss_scale\": 32768, ", 0), 0u) << lines[0];

  const Json hist = Json::parse(lines[1]);
  EXPECT_EQ(hist["type"], "histogram");
  EXPECT_EQ(hist["tensor"].get<std::string>(), name);
  EXPECT_EQ(hist["log2_bins"][0], 3);
  EXPECT_EQ(keys_of(hist), (std::vector<std::string>{"type", "step", "tensor", "loss_scale", "min_exp", "log2_bins",
                                                     "zero", "inf", "nan"}));

  const Json eval = Json::parse(lines[2]);
  EXPECT_EQ(keys_of(eval), (std::vector<std::string>{"type", "epoch", "step", "accuracy"}));
  EXPECT_TRUE(eval["accuracy"].is_null());
}

TEST(MetricsLog, JsonNumber) {
  EXPECT_EQ(json_number(0.5), "0.5");
  EXPECT_EQ(json_number(65536), "65536");
  EXPECT_EQ(json_number(std::nan("")), "null");
  EXPECT_EQ(json_number(-INFINITY), "null");
}

}  // namespace
}  // namespace vkamp::io
