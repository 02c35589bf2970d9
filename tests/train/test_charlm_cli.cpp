// charlm from the command line: its flags, its errors (exit 2 before any
// training), and a short run on a small text whose saved GPT loads back.
// Each run is a child process with the validation layer on.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "support/test_paths.hpp"
#include "support/cli_test.hpp"
#include "vkamp/io/safetensors.hpp"

namespace {

using vkamp::test::rejected;
using Result = vkamp::test::ChildResult;

class CharlmCli : public vkamp::test::TempDirTest {
 protected:
  // A text with something to learn, long enough for windows of 16.
  std::string write_text(const char* name, size_t repeats) {
    std::ofstream f(path(name), std::ios::binary);
    for (size_t i = 0; i < repeats; ++i) f << "the cat sat on the mat. " << (i % 7) << "\n";
    return path(name);
  }
};

// A GPT small enough for a few seconds on a CPU driver.
const std::string kTinyGpt =
    " --n-layer 1 --n-head 2 --n-embd 16 --block-size 16 --batch 4 --eval-every 10 --generate 24";

Result run_charlm(const std::string& args) {
  return vkamp::test::run_child("VKAMP_VALIDATION=1 " + VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/charlm --no-progress " +
                                args);
}

TEST_F(CharlmCli, HelpListsTheLanguageModelFlags) {
  Result r = run_charlm("--help");
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* flag : {"--text", "--size", "--block-size", "--n-layer", "--n-head", "--n-embd", "--eval-every",
                           "--generate", "--temperature", "--top-k", "--prompt", "--max-steps", "--precision"})
    EXPECT_NE(r.output.find(flag), std::string::npos) << flag;
}

TEST_F(CharlmCli, BadInputExitsTwoBeforeTraining) {
  const std::string text = write_text("t.txt", 200);
  EXPECT_TRUE(rejected(run_charlm("--size huge"), "huge"));
  EXPECT_TRUE(rejected(run_charlm("--text " + path("missing.txt")), "missing.txt"));
  EXPECT_TRUE(rejected(run_charlm("--text " + text + kTinyGpt + " --temperature 0"), "temperature"));
  EXPECT_TRUE(rejected(run_charlm("--text " + text + kTinyGpt + " --n-head 3"), "n_head"));
  EXPECT_TRUE(rejected(run_charlm("--text " + text + kTinyGpt + " --prompt Q"), "--prompt"));
  // 3 lines: the held-out tenth is shorter than one window of 16 + 1.
  EXPECT_TRUE(rejected(run_charlm("--text " + write_text("short.txt", 3) + kTinyGpt), "held-out"));
}

TEST_F(CharlmCli, TrainsReportsValidationLossSamplesAndSavesNanoGptNames) {
  const std::string text = write_text("t.txt", 300);
  Result r = run_charlm("--text " + text + kTinyGpt + " --max-steps 40 --prompt the --save " + path("m.safetensors"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("step    10  train loss"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("validation loss"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--- sample: 24 characters"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\nthe"), std::string::npos) << "the sample starts with the prompt:\n" << r.output;

  vkamp::io::TensorFile f = vkamp::io::read_safetensors(path("m.safetensors"));
  EXPECT_EQ(f.metadata.at("vkamp.model"), "gpt");
  EXPECT_EQ(f.metadata.at("vkamp.n_layer"), "1");
  EXPECT_EQ(f.metadata.at("vkamp.block_size"), "16");
  const std::string vocab_size = f.metadata.at("vkamp.vocab_size");
  EXPECT_EQ(vocab_size, "19") << "distinct bytes of the text: ' ', '.', '\\n', 0-6, a c e h m n o s t";
  ASSERT_NE(f.find("transformer.wte.weight"), nullptr);
  EXPECT_EQ(f.find("transformer.wte.weight")->shape, (std::vector<uint64_t>{19, 16}));
  ASSERT_NE(f.find("transformer.h.0.attn.c_attn.weight"), nullptr);
  EXPECT_EQ(f.find("transformer.h.0.attn.c_attn.weight")->shape, (std::vector<uint64_t>{48, 16}));
  EXPECT_EQ(f.find("lm_head.weight"), nullptr) << "the lm_head is tied to wte";
  EXPECT_EQ(f.metadata.at("vkamp.vocab").front(), '"');

  // The saved weights, loaded and not trained (lr 0), give the saved loss.
  Result again = run_charlm("--text " + text + kTinyGpt + " --max-steps 1 --lr 0 --generate 0 --init-from " +
                            path("m.safetensors"));
  ASSERT_EQ(again.status, 0) << again.output;
  const std::string saved = f.metadata.at("vkamp.val_loss");
  EXPECT_NE(again.output.find("validation loss " + saved.substr(0, saved.find('.') + 5)), std::string::npos)
      << "saved " << saved << "\n" << again.output;
}

}  // namespace
