// vkamp-train --loss-scale suggest and auto as a user runs them: the
// suggestion's report (the scale, per tensor its headroom and underflow,
// the YAML line), the exit without weights, the YAML line fed back through
// --config, and bad values of the new flags (exit 2, naming the flag).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "support/cli_test.hpp"
#include "support/test_paths.hpp"
#include "tool_runs.hpp"

namespace {

using Result = vkamp::test::ChildResult;
using vkamp::test::rejected;

Result run_tool(const std::string& args) {
  return vkamp::test::run_child("VKAMP_VALIDATION=1 " + VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/vkamp-train " + args);
}

class LossScaleSuggest : public vkamp::test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    vkamp::test::write_linear_table(path("train.csv"), 640, 1);
    vkamp::test::write_linear_table(path("test.csv"), 200, 2);
  }
  std::string data() const { return " --train " + path("train.csv") + " --test " + path("test.csv") + " --label kind"; }
};

TEST_F(LossScaleSuggest, PrintsTheScalePerTensorFiguresAndAYamlLineThatLoadsBack) {
  const Result r = run_tool(data() + " --loss-scale suggest --suggest-steps 12 --quiet --save " + path("w.safetensors"));
  ASSERT_EQ(r.status, 0) << r.output;
  // auto's cadence: a histogram every 12 / 5 = 2 steps.
  EXPECT_NE(r.output.find("from 6 histograms of the first 12 steps"), std::string::npos) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(suggested scale 2\^(-?\d+) = (\S+): headroom (-?\d+) )"
                                                        R"(doublings, underflow (\S+)%)")))
      << r.output;
  const int exp = std::stoi(m[1]);
  EXPECT_EQ(std::stod(m[2]), std::ldexp(1.0, exp));
  EXPECT_GE(std::stoi(m[3]), 0) << "the default range holds a scale that cannot overflow";
  EXPECT_LE(std::stod(m[4]), 0.1) << "the default target is met";
  // One row per tensor of the default MLP (4-64r-64r-3): name, elements
  // (of one step), headroom, underflow.
  for (const char* t : {"fc1.weight", "fc1.bias", "fc2.weight", "fc3.bias"})
    EXPECT_TRUE(std::regex_search(r.output, std::regex(std::string("\n  ") + t + R"( +\d+ +-?\d+ +\S+%\n)"))) << t;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(\n  fc1.weight +256 )"))) << "4 x 64, per step:\n"
                                                                                  << r.output;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(\nloss_scaling_factor: (\S+)\n)"))) << r.output;
  const std::string yaml_value = m[1];
  EXPECT_EQ(std::stod(yaml_value), std::ldexp(1.0, exp));
  // It reports and exits: no evaluation, no weights.
  EXPECT_EQ(r.output.find("held-out accuracy"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("w.safetensors")));

  std::ofstream(path("scale.yaml")) << "loss_scaling_factor: " << yaml_value << "\n";
  const Result s = run_tool(data() + " --config " + path("scale.yaml") + " --epochs 1");
  ASSERT_EQ(s.status, 0) << s.output;
  EXPECT_NE(s.output.find("static loss scale"), std::string::npos) << s.output;
  EXPECT_NE(s.output.find("held-out accuracy"), std::string::npos) << s.output;
}

TEST_F(LossScaleSuggest, AutoTrainsAndEndsAtAPowerOfTwo) {
  const Result r = run_tool(data() + " --loss-scale auto --auto-warmup 5 --auto-recheck 5 --epochs 2 --quiet");
  ASSERT_EQ(r.status, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(final scale (\S+),)"))) << r.output;
  int e;
  EXPECT_EQ(std::frexp(std::stod(m[1]), &e), 0.5) << r.output;
  EXPECT_NE(r.output.find("held-out accuracy"), std::string::npos) << r.output;
}

// One chooser, one window: suggest after N steps names the scale auto
// chooses after a warm-up of N steps of the same run (the same seed, data
// and dynamic scaling up to there).
TEST_F(LossScaleSuggest, SuggestNamesAutosFirstChoice) {
  const std::string common = data() + " --initial-loss-scale 1024 --quiet";
  const Result s = run_tool(common + " --loss-scale suggest --suggest-steps 20");
  ASSERT_EQ(s.status, 0) << s.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(s.output, m, std::regex(R"(suggested scale 2\^(-?\d+) )"))) << s.output;
  const double suggested = std::ldexp(1.0, std::stoi(m[1]));
  // auto: the first choice after step 19, no re-check before the end.
  const Result a = run_tool(common + " --loss-scale auto --auto-warmup 20 --auto-recheck 1000 --max-steps 24");
  ASSERT_EQ(a.status, 0) << a.output;
  ASSERT_TRUE(std::regex_search(a.output, m, std::regex(R"(final scale (\S+),)"))) << a.output;
  EXPECT_EQ(std::stod(m[1]), suggested) << s.output << "\n" << a.output;
}

TEST_F(LossScaleSuggest, BadValuesExit2NamingTheFlag) {
  EXPECT_TRUE(rejected(run_tool(data() + " --loss-scale sugest"), "--loss-scale"));
  EXPECT_TRUE(rejected(run_tool(data() + " --loss-scale suggest --underflow-target 1"), "--underflow-target"));
  EXPECT_TRUE(rejected(run_tool(data() + " --loss-scale suggest --underflow-target -0.1"), "--underflow-target"));
  EXPECT_TRUE(rejected(run_tool(data() + " --loss-scale suggest --suggest-steps 0"), "--suggest-steps"));
  EXPECT_TRUE(rejected(run_tool(data() + " --loss-scale auto --auto-warmup 0"), "--auto-warmup"));
  EXPECT_TRUE(rejected(run_tool(data() + " --loss-scale auto --auto-recheck x"), "--auto-recheck"));
  EXPECT_TRUE(rejected(run_tool(data() + " --loss-scale auto --overflow-policy retry"), "--overflow-policy"));
  std::ofstream(path("bad.yaml")) << "loss_scaling_factor: auto\nunderflow_target: 2\n";
  EXPECT_TRUE(rejected(run_tool(data() + " --config " + path("bad.yaml")), "underflow_target"));
}

}  // namespace
