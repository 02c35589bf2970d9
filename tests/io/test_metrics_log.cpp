// The --metrics JSON Lines file: every record parses as JSON (nlohmann),
// strings are escaped, inf and NaN are null, and the fields keep their order;
// the underflow accounting is written as fractions of the elements, with the
// headroom in doublings.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vkamp/io/metrics_log.hpp"
#include "vkamp/platform.hpp"

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
      (std::filesystem::temp_directory_path() / ("vkamp-metrics-" + std::to_string(vkamp::platform::process_id()) + ".jsonl")).string();
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
                                                     "lr", "retries", "step_time", "zeros", "subnormal",
                                                     "lost_unscaled", "headroom"}));
  for (const char* key : {"zeros", "subnormal", "lost_unscaled", "headroom"})
    EXPECT_TRUE(step[key].is_null()) << key << ": a log without an UnderflowScope has no element counts";
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

std::string temp_path(const char* stem) {
  return (std::filesystem::temp_directory_path() / (stem + std::to_string(vkamp::platform::process_id()) + ".jsonl")).string();
}

// Two tensors of 1000 and 24 elements in fp16: the step's totals are shares
// of all 1024, each tensor's of its own, and the headroom is the doublings
// from the largest |g| to fp16's 65504.
TEST(MetricsLog, UnderflowIsWrittenAsFractionsAndHeadroom) {
  const std::string path = temp_path("vkamp-underflow-");
  train::UnderflowScope scope;
  scope.precision = Format::F16;
  scope.tensors = {"fc1.weight", "fc1.bias"};
  scope.elements = {1000, 24};
  scope.total = 1024;
  StepMetrics m;
  m.step = 4;
  m.loss_scale = 1024;
  m.zeros = 274;  // the tensors' sums
  m.subnormal = 2;
  m.lost_unscaled = 100;
  m.max_abs_grad = 1000;  // 2^9.97: 6 doublings to 64000 <= 65504, a 7th passes it
  train::TensorUnderflow u;
  u.step = 4;
  u.loss_scale = 1024;
  u.stats = {train::TensorStats{250, 2, 100, 5, std::bit_cast<uint32_t>(1000.0f)},
             train::TensorStats{24, 0, 0, 0, 0}};  // all zero: no headroom
  {
    MetricsLog log(path, scope);
    log.write(m);
    log.write(u);
  }
  const std::vector<std::string> lines = lines_of(path);
  std::filesystem::remove(path);
  ASSERT_EQ(lines.size(), 3u) << "the step, then one record per tensor";
  const Json step = Json::parse(lines[0]);
  EXPECT_EQ(step["zeros"].get<double>(), 274.0 / 1024);
  EXPECT_EQ(step["subnormal"].get<double>(), 2.0 / 1024);
  EXPECT_EQ(step["lost_unscaled"].get<double>(), 100.0 / 1024);
  EXPECT_EQ(step["headroom"], 6);
  EXPECT_EQ(step["headroom"], *train::headroom_doublings(Format::F16, m.max_abs_grad));

  const Json w = Json::parse(lines[1]);
  EXPECT_EQ(keys_of(w), (std::vector<std::string>{"type", "step", "tensor", "loss_scale", "zeros", "subnormal",
                                                  "lost_unscaled", "nonfinite", "headroom"}));
  EXPECT_EQ(w["type"], "underflow");
  EXPECT_EQ(w["step"], 4);
  EXPECT_EQ(w["tensor"], "fc1.weight");
  EXPECT_EQ(w["loss_scale"].get<double>(), 1024.0);
  EXPECT_EQ(w["zeros"].get<double>(), 250.0 / 1000);
  EXPECT_EQ(w["subnormal"].get<double>(), 2.0 / 1000);
  EXPECT_EQ(w["lost_unscaled"].get<double>(), 100.0 / 1000);
  EXPECT_EQ(w["nonfinite"].get<double>(), 5.0 / 1000);
  EXPECT_EQ(w["headroom"], 6);
  const Json b = Json::parse(lines[2]);
  EXPECT_EQ(b["tensor"], "fc1.bias");
  EXPECT_EQ(b["zeros"].get<double>(), 1.0);
  EXPECT_EQ(b["lost_unscaled"].get<double>(), 0.0);
  EXPECT_TRUE(b["headroom"].is_null()) << lines[2];
}

// A record whose tensors are not the scope's is not written: its numbers
// would be shares of the wrong elements.
TEST(MetricsLog, PerTensorRecordsNeedTheirScope) {
  const std::string path = temp_path("vkamp-underflow-scope-");
  train::TensorUnderflow u;
  u.stats.resize(2);
  {
    MetricsLog log(path);
    log.write(u);
  }
  EXPECT_TRUE(lines_of(path).empty());
  std::filesystem::remove(path);
}

TEST(MetricsLog, JsonNumber) {
  EXPECT_EQ(json_number(0.5), "0.5");
  EXPECT_EQ(json_number(65536), "65536");
  EXPECT_EQ(json_number(std::nan("")), "null");
  EXPECT_EQ(json_number(-INFINITY), "null");
}

}  // namespace
}  // namespace vkamp::io
