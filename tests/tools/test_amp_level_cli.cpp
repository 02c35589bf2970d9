// vkamp-train --amp-level as a user runs it: each level trains on a small
// CSV, the run line names the level, O1's summary lists fp32 activation
// memory beside the 16-bit, O0 runs in fp32, and bad values (the flag, the
// YAML key, Cerebras's precision_opt_level) exit 2 naming the closest value.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "support/cli_test.hpp"
#include "tool_runs.hpp"

namespace {

using vkamp::test::rejected;
using vkamp::test::run_tool;

class AmpLevelCli : public vkamp::test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    vkamp::test::write_linear_table(path("train.csv"), 640, 1);
    vkamp::test::write_linear_table(path("test.csv"), 200, 2);
  }
  std::string data() const {
    return " --train " + path("train.csv") + " --test " + path("test.csv") + " --label kind --epochs 3 --lr 0.1";
  }
};

TEST_F(AmpLevelCli, EveryLevelTrainsAndSaysWhatItStores) {
  for (const char* level : {"O0", "O1", "O2", "O3"}) {
    SCOPED_TRACE(level);
    const auto r = run_tool("vkamp-train", data() + " --amp-level " + level);
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_GT(std::stod(vkamp::test::number_after(r.output, "held-out accuracy")), 80.0) << r.output;
    const std::string l(level);
    if (l == "O2") EXPECT_EQ(r.output.find(" at O"), std::string::npos) << "the default says nothing";
    else EXPECT_NE(r.output.find(" at " + l), std::string::npos) << r.output;
    // The activation memory by format: fp32 at O0 and O1, fp16 at all but O0.
    const size_t at = r.output.find("without reuse: ");
    ASSERT_NE(at, std::string::npos) << r.output;
    const std::string formats = r.output.substr(at, r.output.find(')', at) - at);
    EXPECT_EQ(formats.find("fp32 ") != std::string::npos, l == "O0" || l == "O1") << formats;
    EXPECT_EQ(formats.find("fp16 ") != std::string::npos, l != "O0") << formats;
  }
}

// O3 differs from O2 on BatchNorm (docs/config.md, precision levels): the
// help says so, not "as O2".
TEST_F(AmpLevelCli, HelpSaysWhereO3DiffersFromO2) {
  const auto r = run_tool("vkamp-train", "--help");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("O3 (O2 plus BatchNorm's weight, bias and batch statistics in --precision"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("as O2 for today's ops"), std::string::npos) << r.output;
}

TEST_F(AmpLevelCli, BadValuesExit2NamingTheClosest) {
  EXPECT_TRUE(rejected(run_tool("vkamp-train", data() + " --amp-level 02"), "--amp-level: unknown level '02'"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", data() + " --amp-level 02"), "did you mean O2?"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", data() + " --amp-levl O1"), "--amp-level"));
  std::ofstream(path("bad.yaml")) << "amp_level: O5\n";
  EXPECT_TRUE(rejected(run_tool("vkamp-train", data() + " --config " + path("bad.yaml")), "amp_level"));
  std::ofstream(path("cerebras.yaml")) << "trainer:\n  init:\n    precision:\n      precision_opt_level: 3\n";
  EXPECT_TRUE(rejected(run_tool("vkamp-train", data() + " --config " + path("cerebras.yaml")),
                       "precision_opt_level: unknown value '3' (expected 0 | 1 | 2"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", data() + " --amp-level O1 --loss-scale per-layer"), "per-layer"));
}

}  // namespace
