// charlm from the command line: its flags, its errors (exit 2 before any
// training), and a short run on a small text whose saved GPT loads back
// and samples the same text through vkamp-generate.
// Each run is a child process with the validation layer on.
#include <filesystem>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
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

Result run_generate(const std::string& args) {
  return vkamp::test::run_child("VKAMP_VALIDATION=1 " + VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/vkamp-generate " + args);
}

// The final "validation loss X nats per character" of a run; NaN if none.
double validation_loss(const std::string& output) {
  const std::string key = "\nvalidation loss ";
  const size_t at = output.find(key);
  return at == std::string::npos ? std::nan("") : std::strtod(output.c_str() + at + key.size(), nullptr);
}

// The text between charlm's "--- sample: ... ---" line and the closing "---".
std::string sample_of(const std::string& output) {
  const size_t head = output.find("--- sample:");
  if (head == std::string::npos) return "";
  const size_t start = output.find('\n', head) + 1;
  const size_t end = output.find("\n---\n", start);
  return end == std::string::npos ? "" : output.substr(start, end - start);
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
  EXPECT_TRUE(rejected(run_charlm("--text " + text + kTinyGpt + " --temperature -1"), "temperature"));
  EXPECT_TRUE(rejected(run_charlm("--text " + text + kTinyGpt + " --n-head 3"), "n_head"));
  EXPECT_TRUE(rejected(run_charlm("--text " + text + kTinyGpt + " --prompt Q"), "--prompt"));
  // 3 lines: the held-out tenth is shorter than one window of 16 + 1.
  EXPECT_TRUE(rejected(run_charlm("--text " + write_text("short.txt", 3) + kTinyGpt), "held-out"));
}

TEST_F(CharlmCli, GenerateRefusesWhatIsNotASavedGpt) {
  EXPECT_TRUE(rejected(run_generate(""), "--weights"));
  EXPECT_TRUE(rejected(run_generate("--weights " + path("missing.safetensors")), "missing.safetensors"));
  EXPECT_TRUE(rejected(run_generate("--weights x --lr 1"), "--lr"));
  EXPECT_TRUE(rejected(run_generate("--weights x --temperature -1"), "temperature"));
  EXPECT_TRUE(rejected(run_charlm("--generate-only"), "--init-from"));
  Result help = run_generate("--help");
  EXPECT_EQ(help.status, 0) << help.output;
  for (const char* flag : {"--weights", "--prompt", "--max-new", "--temperature", "--top-k", "--seed"})
    EXPECT_NE(help.output.find(flag), std::string::npos) << flag;
}

// --eval-iters bounds the evaluations during training; the final
// validation loss still reads the whole validation text, so it equals a
// run's that evaluated everything (evaluations do not change training).
TEST_F(CharlmCli, EvalItersSamplesTheEvaluationsButNotTheFinalLoss) {
  const std::string text = write_text("t.txt", 300);
  auto final_loss = [](const std::string& out) {
    const size_t at = out.find("validation loss ");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
  };
  Result all = run_charlm("--text " + text + kTinyGpt + " --max-steps 20 --generate 0 --eval-iters 0");
  Result some = run_charlm("--text " + text + kTinyGpt + " --max-steps 20 --generate 0 --eval-iters 1");
  ASSERT_EQ(all.status, 0) << all.output;
  ASSERT_EQ(some.status, 0) << some.output;
  EXPECT_FALSE(final_loss(all.output).empty()) << all.output;
  EXPECT_EQ(final_loss(some.output), final_loss(all.output)) << some.output << "\n" << all.output;
}

// --dry-run: the model built and its step recorded, the device memory
// printed (the plan, and every buffer held: at least the plan's
// parameters, and never more now than at most), no step trained, exit 0.
TEST_F(CharlmCli, DryRunPrintsTheDeviceMemoryAndTrainsNothing) {
  const std::string text = write_text("t.txt", 300);
  Result r = run_charlm("--text " + text + kTinyGpt + " --dry-run --save " + path("never.safetensors"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("--dry-run: set up and recorded, not trained"), std::string::npos) << r.output;
  const char* plan_key = "device memory (MiB): parameters ";
  const char* held_key = "every buffer held ";
  const char* plan = std::strstr(r.output.c_str(), plan_key);
  ASSERT_NE(plan, nullptr) << r.output;
  const char* held = std::strstr(plan, held_key);
  ASSERT_NE(held, nullptr) << r.output;
  const double parameters = std::strtod(plan + std::strlen(plan_key), nullptr);
  char* rest = nullptr;
  const double now = std::strtod(held + std::strlen(held_key), &rest);
  const double peak = std::strtod(rest + std::strlen(" now, "), nullptr);
  EXPECT_GT(parameters, 0);
  EXPECT_GE(now, parameters);
  EXPECT_GE(peak, now);
  EXPECT_EQ(r.output.find("validation loss"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("--- sample:"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("never.safetensors")));
}

// --save-best with sampled evaluations (--eval-iters): the file holds the
// best evaluation's weights, and its vkamp.val_loss is their loss over the
// whole validation text, as a run that loads them (lr 0) computes it.
TEST_F(CharlmCli, SaveBestRecordsTheSavedWeightsWholeValidationLoss) {
  const std::string text = write_text("t.txt", 300);
  Result r = run_charlm("--text " + text + kTinyGpt + " --max-steps 30 --generate 0 --eval-iters 1 --dropout 0.1 " +
                        "--save-best --save " + path("best.safetensors"));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto meta = vkamp::io::read_safetensors(path("best.safetensors")).metadata;
  EXPECT_EQ(meta.at("vkamp.dropout"), "0.1") << "the training's dropout, recorded";
  const std::string saved = meta.at("vkamp.val_loss");
  Result again = run_charlm("--text " + text + kTinyGpt + " --max-steps 1 --lr 0 --generate 0 --eval-iters 0 " +
                            "--init-from " + path("best.safetensors"));
  ASSERT_EQ(again.status, 0) << again.output;
  // The run prints 4 decimals: within half of the last one.
  EXPECT_NEAR(validation_loss(again.output), std::stod(saved), 0.5e-4) << r.output << "\n" << again.output;
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
  EXPECT_EQ(f.metadata.at("vkamp.dropout"), "0");
  const std::string vocab_size = f.metadata.at("vkamp.vocab_size");
  EXPECT_EQ(vocab_size, "19") << "distinct bytes of the text: ' ', '.', '\\n', 0-6, a c e h m n o s t";
  ASSERT_NE(f.find("transformer.wte.weight"), nullptr);
  EXPECT_EQ(f.find("transformer.wte.weight")->shape, (std::vector<uint64_t>{19, 16}));
  ASSERT_NE(f.find("transformer.h.0.attn.c_attn.weight"), nullptr);
  EXPECT_EQ(f.find("transformer.h.0.attn.c_attn.weight")->shape, (std::vector<uint64_t>{48, 16}));
  EXPECT_EQ(f.find("lm_head.weight"), nullptr) << "the lm_head is tied to wte";
  EXPECT_EQ(f.metadata.at("vkamp.vocab").front(), '"');

  // The saved file samples the same text, token for token, as the end of
  // the run that saved it, with the same prompt, options and seed: through
  // vkamp-generate (no text, no training, no validation) and through
  // charlm --generate-only.
  const std::string sample = sample_of(r.output);
  ASSERT_FALSE(sample.empty()) << r.output;
  Result gen = run_generate("--weights " + path("m.safetensors") + " --prompt the --max-new 24");
  ASSERT_EQ(gen.status, 0) << gen.output;
  EXPECT_NE(gen.output.find(sample + "\n"), std::string::npos) << "trained:\n" << sample << "\nfile:\n" << gen.output;
  Result only = run_charlm("--generate-only --init-from " + path("m.safetensors") + " --prompt the --generate 24");
  ASSERT_EQ(only.status, 0) << only.output;
  EXPECT_EQ(sample_of(only.output), sample) << only.output;
  EXPECT_EQ(only.output.find("train loss"), std::string::npos) << "no training: " << only.output;

  // A NaN in a weight: exit 2 at load, naming the tensor, not a run whose
  // outputs are all NaN.
  vkamp::io::TensorFile damaged = f;
  vkamp::io::Tensor* attn = nullptr;
  for (vkamp::io::Tensor& t : damaged.tensors)
    if (t.name == "transformer.h.0.attn.c_attn.weight") attn = &t;
  ASSERT_NE(attn, nullptr);
  ASSERT_EQ(attn->dtype, vkamp::io::DType::F32);
  const uint32_t nan_bits = 0x7fc00000u;
  std::memcpy(attn->data.data() + 4 * 5, &nan_bits, 4);
  vkamp::io::write_safetensors(path("nan.safetensors"), damaged);
  EXPECT_TRUE(rejected(run_generate("--weights " + path("nan.safetensors") + " --max-new 4"),
                       "tensor 'transformer.h.0.attn.c_attn.weight' holds NaN (element 5 of 768)"));

  // A cold pipeline cache is said once; the next run finds the pipelines.
  const std::string cache = "VKAMP_PIPELINE_CACHE=" + path("pipelines.bin") + " ";
  const std::string generate = VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/vkamp-generate --weights " +
                               path("m.safetensors") + " --max-new 4";
  const Result cold = vkamp::test::run_child(cache + "VKAMP_VALIDATION=1 " + generate);
  ASSERT_EQ(cold.status, 0) << cold.output;
  EXPECT_NE(cold.output.find("note: no compiled pipelines cached for"), std::string::npos) << cold.output;
  EXPECT_NE(cold.output.find("later runs read them from " + path("pipelines.bin")), std::string::npos)
      << cold.output;
  // A driver that keeps pipelines (the file holds more than its 32-byte
  // header) is warm on the next run; lavapipe keeps none between processes,
  // so there the note is said again, and truly.
  const bool kept = std::filesystem::file_size(path("pipelines.bin")) > 32;
  const Result warm = vkamp::test::run_child(cache + "VKAMP_VALIDATION=1 " + generate);
  ASSERT_EQ(warm.status, 0) << warm.output;
  EXPECT_EQ(warm.output.find("no compiled pipelines cached") == std::string::npos, kept) << warm.output;

  // The saved weights, loaded and not trained (lr 0), give the saved loss.
  Result again = run_charlm("--text " + text + kTinyGpt + " --max-steps 1 --lr 0 --generate 0 --init-from " +
                            path("m.safetensors"));
  ASSERT_EQ(again.status, 0) << again.output;
  const std::string saved = f.metadata.at("vkamp.val_loss");
  EXPECT_NEAR(validation_loss(again.output), std::stod(saved), 0.5e-4) << again.output;
}

}  // namespace
