// A later run's output files (app/run_outputs.hpp): vkamp-studio's "Start
// new run" writes beside the first run's --metrics, --report, --save and
// --checkpoint files, never over them.
#include <gtest/gtest.h>

#include "app/run_outputs.hpp"

namespace vkamp::app {
namespace {

TEST(RunOutputs, TheFirstRunKeepsItsNamesAndLaterOnesAreNumbered) {
  EXPECT_EQ(numbered_output("m.jsonl", 1), "m.jsonl");
  EXPECT_EQ(numbered_output("m.jsonl", 2), "m-run2.jsonl");
  EXPECT_EQ(numbered_output("out/w.safetensors", 13), "out/w-run13.safetensors");
  EXPECT_EQ(numbered_output("out.d/weights", 2), "out.d/weights-run2") << "a dot in the folder is no extension";
  EXPECT_EQ(numbered_output(".hidden", 2), ".hidden-run2") << "a leading dot is part of the name";
  EXPECT_EQ(numbered_output("a.tar.gz", 3), "a.tar-run3.gz");
  EXPECT_EQ(numbered_output("", 2), "") << "no file stays no file";
}

TEST(RunOutputs, EveryFileARunWritesIsNumbered) {
  RunOptions cfg;
  cfg.metrics_path = "m.jsonl";
  cfg.report_path = "r.png";
  cfg.save_path = "w.safetensors";
  cfg.checkpoint_path = "c.ckpt";
  cfg.init_from = "start.safetensors";
  const RunOptions second = with_numbered_outputs(cfg, 2);
  EXPECT_EQ(second.metrics_path, "m-run2.jsonl");
  EXPECT_EQ(second.report_path, "r-run2.png");
  EXPECT_EQ(second.save_path, "w-run2.safetensors");
  EXPECT_EQ(second.checkpoint_path, "c-run2.ckpt");
  EXPECT_EQ(second.init_from, "start.safetensors") << "an input, read again as it is";
}

}  // namespace
}  // namespace vkamp::app
