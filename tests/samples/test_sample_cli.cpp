// The sample binaries on bad input: a clear message on stderr and exit
// status 2, never a crash. Each runs as a child process with the
// validation layer on; a validation message in its output fails the test.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/test_paths.hpp"
#include "support/cli_test.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/knobs.hpp"
#if VKAMP_HAS_DASHBOARD
#include "ui/picture.hpp"
#include "vkamp/platform.hpp"
#endif

namespace {

namespace fs = std::filesystem;

using Result = vkamp::test::ChildResult;
using vkamp::test::rejected;

class SampleCli : public vkamp::test::TempDirTest {};

Result run_sample(const std::string& args, const char* sample = "fashion_mlp") {
  return vkamp::test::run_child("VKAMP_VALIDATION=1 " + VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/" + sample +
                                " --no-progress " + args);
}

// vkamp-info: every device with its float-controls modes per width, what
// vkamp requests, the cooperative-matrix extensions (the shapes, one line
// each, where a device has them: never on lavapipe), and for the chosen
// device the GEMM kernel per class of fp16 product.
TEST_F(SampleCli, InfoListsFloatControlsAndCooperativeMatrices) {
  Result r = vkamp::test::run_child(VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/vkamp-info --validation");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* line : {"inf/NaN keep    fp16 ", "overflow checks exponent-bit tests", "cooperative matrix       KHR ",
                           "precision path  ", "GEMM kernels    ", "* = the device vkamp uses", "MPI: "})
    EXPECT_NE(r.output.find(line), std::string::npos) << line << " in\n" << r.output;
  const bool offers = r.output.find("KHR yes") != std::string::npos || r.output.find("NV yes") != std::string::npos;
  EXPECT_EQ(offers, r.output.find("matrix shapes") != std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("validation error"), std::string::npos) << r.output;
  // (Not rejected(): the usage text names --validation.)
  Result bad = vkamp::test::run_child(VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/vkamp-info --bogus");
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find("unknown flag '--bogus'"), std::string::npos) << bad.output;
}

// A machine without a Vulkan loader (VKAMP_VULKAN_LOADER names a missing
// one): a program starts, says what is missing and exits 1 at its first
// Vulkan call, rather than failing to start for want of a library.
TEST_F(SampleCli, WithoutAVulkanLoaderAProgramSaysSoAndExits1) {
  const std::string missing = "VKAMP_VULKAN_LOADER=" + path("no-such-loader.so") + " ";
  for (const std::string program : {"/vkamp-info", "/overflow_storm --epochs 1"}) {
    Result r = vkamp::test::run_child(missing + VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + program);
    EXPECT_EQ(r.status, 1) << program << ":\n" << r.output;
    EXPECT_NE(r.output.find("vkamp: cannot load the Vulkan loader " + path("no-such-loader.so")), std::string::npos)
        << program << ":\n" << r.output;
    EXPECT_NE(r.output.find("Install your GPU's driver"), std::string::npos) << r.output;
  }
}

// vkamp-info --knobs: every setting (its key and flag) and every variable
// of the environment-knob table, with no device needed; --help names it.
TEST_F(SampleCli, InfoKnobsListsEverySettingAndEnvironmentVariable) {
  const std::string info = VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/vkamp-info";
  Result r = vkamp::test::run_child(info + " --knobs");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const vkamp::EnvKnob& k : vkamp::env_knobs())
    EXPECT_NE(r.output.find(k.name), std::string::npos) << k.name << " in\n" << r.output;
  for (const char* setting : {"steps_per_increase", "--steps-per-increase", "loss_scaling_factor", "--loss-scale",
                              "val_split", "temperature", "0 | 1 | emulate", "[default: "})
    EXPECT_NE(r.output.find(setting), std::string::npos) << setting << " in\n" << r.output;
  Result help = vkamp::test::run_child(info + " --help");
  EXPECT_EQ(help.status, 0) << help.output;
  EXPECT_NE(help.output.find("--knobs"), std::string::npos) << help.output;
}

// A value a validated variable does not take: the variable, its values and
// exit status 2, before any training.
TEST_F(SampleCli, BadEnvironmentKnobValueIsNamed) {
  Result r = vkamp::test::run_child("VKAMP_COOPMAT=tensor " + VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) +
                                    "/fashion_mlp --no-progress --epochs 1");
  EXPECT_TRUE(rejected(r, "VKAMP_COOPMAT is auto, 0, 1, emulate or khr, not \"tensor\""));
}

TEST_F(SampleCli, HelpExitsZeroAndListsTheFlags) {
  Result r = run_sample("--help");
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* flag : {"--device", "--precision", "--loss-scale", "--epochs", "--batch", "--lr", "--data",
                           "--config", "--inject-overflow", "--metrics", "--seed"})
    EXPECT_NE(r.output.find(flag), std::string::npos) << flag;
}

TEST_F(SampleCli, MissingDataDirectory) {
  EXPECT_TRUE(rejected(run_sample("--data " + path("nowhere")), "nowhere"));
}

TEST_F(SampleCli, TruncatedIdxFile) {
  // Valid labels, and images whose header promises 60000 but holds far fewer.
  gzFile l = gzopen(path("train-labels-idx1-ubyte.gz").c_str(), "wb");
  unsigned char lheader[8] = {0, 0, 8, 1, 0, 0, 0xEA, 0x60};
  gzwrite(l, lheader, sizeof lheader);
  std::string labels(60000, '\x03');
  gzwrite(l, labels.data(), unsigned(labels.size()));
  gzclose(l);
  gzFile f = gzopen(path("train-images-idx3-ubyte.gz").c_str(), "wb");
  unsigned char header[16] = {0, 0, 8, 3, 0, 0, 0xEA, 0x60, 0, 0, 0, 28, 0, 0, 0, 28};
  gzwrite(f, header, sizeof header);
  std::string some(1000, '\x7f');
  gzwrite(f, some.data(), unsigned(some.size()));
  gzclose(f);
  Result r = run_sample("--data " + dir_.string());
  EXPECT_TRUE(rejected(r, "train-images-idx3-ubyte"));
  EXPECT_NE(r.output.find("truncated"), std::string::npos) << r.output;
}

TEST_F(SampleCli, BothClipKnobsNameBothFlags) {
  Result r = run_sample("--max-gradient-norm 1 --max-gradient-value 0.5");
  EXPECT_TRUE(rejected(r, "--max-gradient-norm"));
  EXPECT_NE(r.output.find("--max-gradient-value"), std::string::npos) << r.output;
}

TEST_F(SampleCli, ZeroOrNegativeScale) {
  EXPECT_TRUE(rejected(run_sample("--loss-scale 0"), "--loss-scale"));
  EXPECT_TRUE(rejected(run_sample("--loss-scale -8"), "--loss-scale"));
  EXPECT_TRUE(rejected(run_sample("--initial-loss-scale 0"), "--initial-loss-scale"));
}

TEST_F(SampleCli, UnknownPrecision) { EXPECT_TRUE(rejected(run_sample("--precision fp8"), "fp8")); }

TEST_F(SampleCli, UnknownConfigKey) {
  std::ofstream(path("bad.yaml")) << "fp16_type: float16\nloss_scaling_factor: dynamic\nlearning_rat: 0.1\n";
  EXPECT_TRUE(rejected(run_sample("--config " + path("bad.yaml")), "learning_rat"));
}

TEST_F(SampleCli, UnknownFlag) { EXPECT_TRUE(rejected(run_sample("--epoch 3"), "--epoch")); }

TEST_F(SampleCli, EverySampleTakesTheCommonFlags) {
  for (const char* s : {"fashion_mlp", "lenet5", "resnet", "linreg_underflow", "overflow_storm", "charlm"}) {
    EXPECT_EQ(run_sample("--help", s).status, 0) << s;
    EXPECT_TRUE(rejected(run_sample("--precision half", s), "half")) << s;
  }
}

TEST_F(SampleCli, FailFastExitsOneAndKeepsTheLastCheckpoint) {
  // Overflows from step 50 on, floor 64: the scale reaches it and sits
  // there; the checkpoint of step 40 must survive the failure untouched.
  Result r = run_sample("--checkpoint " + path("ck.bin") +
                            " --checkpoint-every 40 --inject-overflow 50-5000 --fail-after-overflows 5"
                            " --min-loss-scale 64",
                        "overflow_storm");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("min_loss_scale (64) through 5 consecutive overflows"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("kept at"), std::string::npos) << r.output;
  ASSERT_TRUE(fs::exists(path("ck.bin")));
  // Resuming from it works: it is the healthy step-40 state.
  Result resumed = run_sample("--checkpoint " + path("ck.bin") + " --resume --inject-overflow 999999",
                              "overflow_storm");
  EXPECT_EQ(resumed.status, 0) << resumed.output;
}

TEST_F(SampleCli, MetricsFileHasOneRecordPerStepAndHistograms) {
  Result r = run_sample("--epochs 1 --inject-overflow 3 --histogram-interval 4 --metrics " + path("m.jsonl"),
                        "overflow_storm");
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(path("m.jsonl"));
  std::string line;
  int steps = 0, histograms = 0, underflow = 0;
  const std::vector<std::string> keys = {"step",      "loss",  "loss_scale", "skipped",       "overflow",
                                         "grad_norm", "lr",    "retries",    "step_time",     "zeros",
                                         "subnormal", "lost_unscaled", "headroom"};
  while (std::getline(in, line)) {
    const auto j = nlohmann::ordered_json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(j.is_object()) << "not a JSON object: " << line;
    if (j.value("type", "") == "histogram") {
      ++histograms;
      continue;
    }
    if (j.value("type", "") == "underflow") {  // per tensor, at the histogram steps
      EXPECT_EQ(j["step"].get<int>() % 4, 0) << line;
      for (const char* key : {"zeros", "subnormal", "lost_unscaled", "nonfinite"}) {
        EXPECT_GE(j[key].get<double>(), 0) << line;
        EXPECT_LE(j[key].get<double>(), 1) << line;
      }
      ++underflow;
      continue;
    }
    std::vector<std::string> got;  // exactly these keys, in this order
    for (auto it = j.begin(); it != j.end(); ++it) got.push_back(it.key());
    ASSERT_EQ(got, keys) << line;
    if (steps == 3) {
      EXPECT_EQ(j["overflow"], true) << line;
    }
    EXPECT_TRUE(j["headroom"].is_number_integer()) << "a nonzero gradient every step: " << line;
    ++steps;
  }
  EXPECT_EQ(steps, 32 + 1) << "one record per step: 32 updates and the skipped one";
  EXPECT_GT(histograms, 0);
  EXPECT_EQ(histograms % 4, 0) << "one histogram per tensor (4 tensors) each time";
  EXPECT_EQ(underflow, histograms) << "one underflow record per tensor with each histogram";
}

// A gzipped IDX pair like Fashion-MNIST's: `count` h x w images whose
// brightness follows the label (so a short run has something to learn).
void write_idx_pair(const std::string& dir, const char* stem, uint32_t count, uint32_t h, uint32_t w) {
  auto be32 = [](std::string& s, uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) s += char((v >> shift) & 0xFF);
  };
  std::string labels("\0\0\x08\x01", 4), images("\0\0\x08\x03", 4);
  be32(labels, count);
  be32(images, count);
  be32(images, h);
  be32(images, w);
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t label = i % 10;
    labels += char(label);
    for (uint32_t p = 0; p < h * w; ++p) images += char((p * 7 + i * 13) % 64 + label * 19);
  }
  for (auto [name, bytes] :
       {std::pair{"-labels-idx1-ubyte.gz", &labels}, std::pair{"-images-idx3-ubyte.gz", &images}}) {
    gzFile f = gzopen((dir + "/" + stem + name).c_str(), "wb");
    gzwrite(f, bytes->data(), unsigned(bytes->size()));
    gzclose(f);
  }
}

TEST_F(SampleCli, Lenet5TrainsAndReportsAccuracySkipsAndScale) {
  write_idx_pair(dir_.string(), "train", 256, 28, 28);
  write_idx_pair(dir_.string(), "t10k", 40, 28, 28);
  Result r = run_sample("--data " + dir_.string() + " --epochs 1 --inject-overflow 1 --profile", "lenet5");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("28x28x1-c6k5p2r-m2-c16k5r-m2-f-120r-84r-10 (61706 parameters)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("test accuracy"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("skipped 1,"), std::string::npos) << "the injected overflow is skipped:\n" << r.output;
  EXPECT_NE(r.output.find("final scale 32768"), std::string::npos) << "one backoff from 2^16:\n" << r.output;
  EXPECT_NE(r.output.find("\n  underflow: lost unscaled "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\n  headroom: "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("validation"), std::string::npos) << r.output;
  // The step's recorded commands: a barrier before each (no parallel groups
  // in a training step) and one for the host at the end.
  const size_t at = r.output.find("commands per step: ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
  // The number before " <what>" on that line; 0 when the report leaves it out.
  auto count = [&](const std::string& what) -> unsigned {
    const size_t w = line.find(" " + what);
    return w == std::string::npos ? 0u : unsigned(std::stoul(line.substr(line.rfind(' ', w - 1) + 1)));
  };
  const unsigned dispatches = count("dispatches"), barriers = count("barriers");
  const unsigned copies = count("copies"), fills = count("fills");
  EXPECT_GT(dispatches, 20u) << line;
  EXPECT_EQ(barriers, dispatches + copies + fills + 1) << line;
}

TEST_F(SampleCli, MetricsHoldOneHeldOutEvaluationPerEpoch) {
  write_idx_pair(dir_.string(), "train", 256, 28, 28);  // 2 steps of 128 per epoch
  write_idx_pair(dir_.string(), "t10k", 40, 28, 28);
  Result r = run_sample("--data " + dir_.string() + " --epochs 3 --metrics " + path("m.jsonl"));
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(path("m.jsonl"));
  std::string line;
  double last_accuracy = -1;
  int evals = 0, steps = 0;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(j.is_object()) << "not a JSON object: " << line;
    if (j.value("type", "") != "eval") {
      steps += !j.contains("type");
      continue;
    }
    ++evals;
    EXPECT_EQ(j.value("epoch", 0), evals) << line;
    EXPECT_EQ(j.value("step", 0), steps) << "after the epoch's last step record: " << line;
    ASSERT_TRUE(j.contains("accuracy") && j["accuracy"].is_number()) << line;
    last_accuracy = j["accuracy"].get<double>();
  }
  EXPECT_EQ(evals, 3) << "one eval record per epoch";
  EXPECT_EQ(steps, 6);
  // The accuracy printed at the end is the last epoch's.
  ASSERT_GE(last_accuracy, 0);
  char printed[32];
  std::snprintf(printed, sizeof printed, "test accuracy %.2f%%", 100 * last_accuracy);
  EXPECT_NE(r.output.find(printed), std::string::npos) << printed << " not in\n" << r.output;
}

TEST_F(SampleCli, Lenet5RejectsImagesOfAnotherSize) {
  write_idx_pair(dir_.string(), "train", 64, 16, 16);
  write_idx_pair(dir_.string(), "t10k", 16, 16, 16);
  Result r = run_sample("--data " + dir_.string(), "lenet5");
  EXPECT_TRUE(rejected(r, "256 features but the model takes 784"));
}

// --save writes the weights under PyTorch's names with the run's metadata;
// --init-from starts a run from them (with lr 0 the weights stay exactly
// those of the file, whatever the seed would have drawn).
TEST_F(SampleCli, SaveThenInitFromTheSavedWeights) {
  write_idx_pair(dir_.string(), "train", 256, 28, 28);
  write_idx_pair(dir_.string(), "t10k", 40, 28, 28);
  const std::string data = " --data " + dir_.string() + " --epochs 1";
  Result saved = run_sample(data + " --save " + path("x.safetensors"));
  ASSERT_EQ(saved.status, 0) << saved.output;
  EXPECT_NE(saved.output.find("written to " + path("x.safetensors")), std::string::npos) << saved.output;
  vkamp::io::TensorFile x = vkamp::io::read_safetensors(path("x.safetensors"));
  EXPECT_EQ(x.metadata.at("vkamp.model"), "784-256r-256r-10");
  EXPECT_EQ(x.metadata.at("vkamp.precision"), "fp16");
  EXPECT_NE(saved.output.find("applied " + x.metadata.at("vkamp.step") + ","), std::string::npos) << saved.output;
  EXPECT_NE(saved.output.find("final scale " + x.metadata.at("vkamp.loss_scale") + ","), std::string::npos)
      << saved.output;
  ASSERT_NE(x.find("fc1.weight"), nullptr);
  EXPECT_EQ(x.find("fc1.weight")->shape, (std::vector<uint64_t>{256, 784}));
  EXPECT_EQ(x.find("fc3.bias")->dtype, vkamp::io::DType::F32);

  Result loaded = run_sample(data + " --seed 99 --lr 0 --init-from " + path("x.safetensors") + " --save " +
                             path("y.safetensors"));
  ASSERT_EQ(loaded.status, 0) << loaded.output;
  EXPECT_NE(loaded.output.find("weights loaded from " + path("x.safetensors")), std::string::npos) << loaded.output;
  vkamp::io::TensorFile y = vkamp::io::read_safetensors(path("y.safetensors"));
  ASSERT_EQ(y.tensors.size(), x.tensors.size());
  for (size_t i = 0; i < x.tensors.size(); ++i) EXPECT_EQ(y.tensors[i].data, x.tensors[i].data) << x.tensors[i].name;
}

TEST_F(SampleCli, Lenet5SavesBf16ConvWeightsInPyTorchShapes) {
  write_idx_pair(dir_.string(), "train", 128, 28, 28);
  write_idx_pair(dir_.string(), "t10k", 16, 28, 28);
  Result r = run_sample("--data " + dir_.string() + " --epochs 1 --save-dtype bf16 --save " + path("l.safetensors"),
                        "lenet5");
  ASSERT_EQ(r.status, 0) << r.output;
  vkamp::io::TensorFile f = vkamp::io::read_safetensors(path("l.safetensors"));
  EXPECT_EQ(f.metadata.at("vkamp.model"), "28x28x1-c6k5p2r-m2-c16k5r-m2-f-120r-84r-10");
  EXPECT_EQ(f.find("conv1.weight")->shape, (std::vector<uint64_t>{6, 1, 5, 5}));
  EXPECT_EQ(f.find("conv2.weight")->shape, (std::vector<uint64_t>{16, 6, 5, 5}));
  EXPECT_EQ(f.find("fc1.weight")->shape, (std::vector<uint64_t>{120, 400}));
  for (const vkamp::io::Tensor& t : f.tensors) EXPECT_EQ(t.dtype, vkamp::io::DType::BF16) << t.name;
}

// resnet's --help names the widths it runs: the model its header prints
// (ResnetReportsEveryEpoch... below) is "resnet 8-16-32 x1 (stem stride 2)".
TEST_F(SampleCli, ResnetHelpNamesTheWidthsItRuns) {
  const Result r = run_sample("--help", "resnet");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("widths 8, 16 and 32"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"resnet 8-16-32 x1 (stem stride 2)\""), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("16, 32 and 64"), std::string::npos) << r.output;
}

// resnet: the test accuracy after every epoch, then the weights under
// torchvision's names in PyTorch's layouts, BatchNorm's running statistics
// in fp32 and its counter as PyTorch's int64: one count per applied step.
TEST_F(SampleCli, ResnetReportsEveryEpochAndExportsBatchNormStatistics) {
  write_idx_pair(dir_.string(), "train", 128, 28, 28);
  write_idx_pair(dir_.string(), "t10k", 20, 28, 28);
  Result r = run_sample("--data " + dir_.string() + " --epochs 2 --batch 32 --save " + path("r.safetensors"), "resnet");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("resnet: resnet 8-16-32 x1 (stem stride 2) ("), std::string::npos) << r.output;
  for (const char* line : {"\nepoch 1/2  train loss ", "\nepoch 2/2  train loss ", "\ntest accuracy ",
                           "weights (F32) written to"})
    EXPECT_NE(r.output.find(line), std::string::npos) << line << " in\n" << r.output;
  EXPECT_EQ(r.output.find("validation"), std::string::npos) << r.output;
  vkamp::io::TensorFile f = vkamp::io::read_safetensors(path("r.safetensors"));
  EXPECT_EQ(f.metadata.at("vkamp.model"), "resnet 8-16-32 x1 (stem stride 2)");
  for (const auto& [name, shape] : std::vector<std::pair<std::string, std::vector<uint64_t>>>{
           {"conv1.weight", {8, 1, 3, 3}},
           {"layer1.0.conv2.weight", {8, 8, 3, 3}},
           {"layer2.0.conv1.weight", {16, 8, 3, 3}},
           {"layer2.0.downsample.0.weight", {16, 8, 1, 1}},
           {"layer3.0.bn2.weight", {32}},
           {"fc.weight", {10, 32}}}) {
    ASSERT_NE(f.find(name), nullptr) << name;
    EXPECT_EQ(f.find(name)->shape, shape) << name;
  }
  EXPECT_EQ(f.find("layer1.0.downsample.0.weight"), nullptr) << "an identity shortcut where the shapes agree";
  const vkamp::io::Tensor* var = f.find("layer3.0.downsample.1.running_var");
  ASSERT_NE(var, nullptr);
  EXPECT_EQ(var->dtype, vkamp::io::DType::F32);
  const std::vector<float> v = f.floats("layer3.0.downsample.1.running_var", "");
  EXPECT_NE(v, std::vector<float>(v.size(), 1.0f)) << "the running variance moved from its start";
  const vkamp::io::Tensor* tracked = f.find("bn1.num_batches_tracked");
  ASSERT_NE(tracked, nullptr);
  EXPECT_EQ(tracked->dtype, vkamp::io::DType::I64);
  ASSERT_EQ(tracked->data.size(), 8u);
  int64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= int64_t(tracked->data[i]) << (8 * i);
  EXPECT_EQ(n, std::stoll(f.metadata.at("vkamp.step"))) << "one update of the statistics per applied step";
}

TEST_F(SampleCli, BadInitFromFileExitsTwoBeforeTraining) {
  write_idx_pair(dir_.string(), "train", 256, 28, 28);
  write_idx_pair(dir_.string(), "t10k", 16, 28, 28);
  const std::string data = "--data " + dir_.string() + " --epochs 1 --init-from ";
  std::ofstream(path("notes.safetensors")) << "not tensors at all\n";
  Result text = run_sample(data + path("notes.safetensors"));
  EXPECT_TRUE(rejected(text, path("notes.safetensors") + ": not a safetensors file"));
  EXPECT_EQ(text.output.find("test accuracy"), std::string::npos) << text.output;

  // A real safetensors file, but for another network.
  vkamp::io::TensorFile other;
  other.tensors.push_back({"fc1.weight", vkamp::io::DType::F32, {2, 2}, std::vector<uint8_t>(16, 0)});
  vkamp::io::write_safetensors(path("other.safetensors"), other);
  Result mismatch = run_sample(data + path("other.safetensors"));
  EXPECT_TRUE(rejected(mismatch, path("other.safetensors") + ": tensor 'fc1.weight' has shape [2, 2]"));
  EXPECT_EQ(mismatch.output.find("test accuracy"), std::string::npos) << mismatch.output;

  EXPECT_TRUE(rejected(run_sample(data + path("absent.safetensors")), path("absent.safetensors")));
}

TEST_F(SampleCli, SaveIntoAMissingDirectoryExitsTwoBeforeTraining) {
  Result r = run_sample("--save " + path("nowhere/w.safetensors"));
  EXPECT_TRUE(rejected(r, "--save " + path("nowhere/w.safetensors") + ": cannot write into"));
  EXPECT_EQ(r.output.find("fashion_mlp on "), std::string::npos) << "no device was even opened:\n" << r.output;
  EXPECT_TRUE(rejected(run_sample("--save-dtype cb16"), "--save-dtype"));
}

TEST_F(SampleCli, LinregShowsTheStallAndTheScaledConvergence) {
  Result r = run_sample("--epochs 25", "linreg_underflow");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("without scaling the loss stalls"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("with loss scaling it keeps falling"), std::string::npos) << r.output;
  // The gradients that flush in the unscaled run are the ones the scale saves.
  const size_t at = r.output.find("the scale saved ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_GT(std::stod(r.output.substr(at + 16)), 10.0) << r.output.substr(at, 80);
  EXPECT_EQ(r.output.find("validation"), std::string::npos) << r.output;
}

}  // namespace

#if VKAMP_HAS_DASHBOARD
// --report draws the dashboard offscreen: no X server needed (DISPLAY is
// unset), and the picture holds more than the empty frame.
TEST_F(SampleCli, ReportWritesTheDashboardWithoutADisplay) {
  vkamp::platform::set_env("DISPLAY", nullptr);
  Result r = run_sample("--epochs 2 --report " + path("storm.png"), "overflow_storm");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("validation"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("storm.png"), std::string::npos) << r.output;
  vkamp::test::Picture pic = vkamp::test::Picture::load(path("storm.png"));
  ASSERT_FALSE(pic.empty());
  EXPECT_EQ(pic.width, 1600);
  EXPECT_EQ(pic.height, 1000);
  // The loss-scale line's colour (dashboard.cpp) in the top right quarter.
  EXPECT_GT(pic.count_near(800, 0, 1600, 330, 250, 200, 80), 200u);
}
#else
// A build without the dashboard (-DVKAMP_BUILD_UI=OFF) refuses --report
// before training, with exit status 2, and writes nothing.
TEST_F(SampleCli, ReportWithoutTheDashboardExits2) {
  Result r = run_sample("--epochs 2 --report " + path("storm.png"), "overflow_storm");
  EXPECT_TRUE(rejected(r, "this build has no dashboard")) << r.output;
  EXPECT_FALSE(fs::exists(path("storm.png")));
}
#endif

TEST_F(SampleCli, MetricsNeedAWritableDirectory) {
  EXPECT_TRUE(rejected(run_sample("--metrics " + path("nowhere/m.jsonl"), "overflow_storm"), "nowhere"));
  fs::create_directories(path("locked"));
  fs::permissions(path("locked"), fs::perms::owner_read | fs::perms::owner_exec);
  // root (and Windows) may write anyway; the check is then the system's answer, not ours.
  if (!vkamp::platform::can_write_into(path("locked"))) {
    EXPECT_TRUE(rejected(run_sample("--metrics " + path("locked/m.jsonl"), "overflow_storm"), "locked"));
  }
  fs::permissions(path("locked"), fs::perms::owner_all);
}

TEST_F(SampleCli, RetryWithoutDynamicScalingNamesBothSettings) {
  for (const char* scale : {"128", "none"}) {
    Result r = run_sample(std::string("--overflow-policy retry --loss-scale ") + scale, "overflow_storm");
    EXPECT_TRUE(rejected(r, "--overflow-policy retry (overflow_policy)")) << scale;
    EXPECT_NE(r.output.find("--loss-scale (loss_scaling_factor)"), std::string::npos) << r.output;
  }
}

// apply applies the injected inf at step 39, so fc1.weight goes non-finite:
// exit 1 naming the step and the tensor, and the checkpoint of step 20
// survives (the one due at step 40 would hold the broken weights).
TEST_F(SampleCli, ApplyStopsOnNonFiniteMasterWeightsAndKeepsTheCheckpoint) {
  Result r = run_sample("--overflow-policy apply --inject-overflow 39 --checkpoint " + path("ck.bin") +
                            " --checkpoint-every 20",
                        "overflow_storm");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("non-finite at step 39: first fc1.weight[0]"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("validation"), std::string::npos) << r.output;
  ASSERT_TRUE(fs::exists(path("ck.bin")));
  // A run from it trains to the end: its weights are the finite ones of step 20.
  Result resumed = run_sample("--epochs 1 --checkpoint " + path("ck.bin") + " --resume --inject-overflow 999999",
                              "overflow_storm");
  EXPECT_EQ(resumed.status, 0) << resumed.output;
}

TEST_F(SampleCli, ReportNeedsAPngNameAndAWritableDirectory) {
  EXPECT_TRUE(rejected(run_sample("--report " + path("out.jpg"), "overflow_storm"), ".png"));
  EXPECT_TRUE(rejected(run_sample("--report " + path("nowhere/out.png"), "overflow_storm"), "nowhere"));
}

namespace vkamp::test {
namespace {

// The check, on synthetic data: bf16 at a loss scale of 1e30 keeps
// every scaled gradient finite (bf16 reaches 3.4e38), and so its squares'
// sum must not be called an overflow (it would be 1e54 summed naively).
TEST_F(SampleCli, Bf16AtAHugeStaticScaleSkipsNoStep) {
  write_idx_pair(dir_.string(), "train", 1280, 28, 28);  // 10 steps of 128
  write_idx_pair(dir_.string(), "t10k", 40, 28, 28);
  Result r = run_sample("--data " + dir_.string() + " --epochs 1 --precision bfloat16 --loss-scale 1e30");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("steps 10 (applied 10, skipped 0, overflows 0)"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace vkamp::test
