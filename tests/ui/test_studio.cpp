// vkamp-studio under Xvfb with lavapipe and the validation layer: it trains
// while drawing, and its last frame (--screenshot) and plotted arrays
// (--probe) hold the run (a fine-tune's too); bad flags and configs give a message on stderr
// and exit status 2 before any window opens, never a crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "picture.hpp"
#include "support/child_process.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::test {
namespace {

namespace fs = std::filesystem;

using Result = ChildResult;

// The display is the runner's: ctest starts this binary under Xvfb
// (tests/ui/with_xvfb.sh on Linux; Wine's runner under Xvfb for Windows).
Result run_studio(const std::string& args) {
  return run_child(std::string("VKAMP_VALIDATION=1 ") + VKAMP_STUDIO + " " + args);
}

// One line of the --probe file: a plotted series.
struct Series {
  std::string panel, name;
  size_t points = 0;
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

struct Probe {
  std::string title, status;
  size_t records = 0, skipped = 0, histograms = 0;
  std::vector<Series> series;
  const Series* find(const std::string& panel, const std::string& name) const {
    for (auto& s : series)
      if (s.panel == panel && s.name == name) return &s;
    return nullptr;
  }
};

// The --probe file is one JSON object; an unreadable or missing one reads
// as an empty probe (the tests then fail on what is missing).
Probe read_probe(const std::string& path) {
  Probe p;
  std::ifstream in(path);
  if (!in) return p;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    ADD_FAILURE() << path << " is not a JSON object";
    return p;
  }
  p.title = j.value("title", "");
  p.status = j.value("status", "");
  p.records = j.value("records", size_t(0));
  p.skipped = j.value("skipped", size_t(0));
  p.histograms = j.value("histograms", size_t(0));
  for (const auto& one : j.value("series", nlohmann::json::array())) {
    Series s;
    s.panel = one.value("panel", "");
    s.name = one.value("series", "");
    s.points = one.value("points", size_t(0));
    const auto rect = one.value("rect", std::vector<float>{0, 0, 0, 0});
    if (rect.size() == 4) {
      s.x0 = rect[0];
      s.y0 = rect[1];
      s.x1 = rect[2];
      s.y1 = rect[3];
    }
    p.series.push_back(s);
  }
  return p;
}

class Studio : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vkamp-studio-" + std::to_string(vkamp::platform::process_id()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(Studio, TrainsWhileShowingEveryPanel) {
  // The default sample (fashion_mlp, fp16, dynamic scaling), small batches
  // so steps come quickly, two injected overflows, a histogram every 4 steps.
  Result r = run_studio("--batch 32 --inject-overflow 8,9 --histogram-interval 4 --until-step 16 --frames 10 "
                        "--screenshot " + path("shot.png") + " --probe " + path("probe.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("validation"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("frames/s"), std::string::npos) << r.output;

  Probe p = read_probe(path("probe.json"));
  EXPECT_EQ(p.status, "training");
  EXPECT_GE(p.records, 16u);
  EXPECT_EQ(p.skipped, 2u);  // steps 8 and 9
  EXPECT_GT(p.histograms, 0u);
  const Series* loss = p.find("loss", "smoothed");
  const Series* scale = p.find("loss_scale", "scale");
  const Series* skipped = p.find("loss_scale", "skipped steps");
  const Series* bins = p.find("histogram", "bins");
  ASSERT_TRUE(loss && scale && skipped && bins) << "a panel is missing from the probe";
  EXPECT_GE(loss->points, 16u);
  EXPECT_GE(scale->points, 16u);
  EXPECT_EQ(skipped->points, 2u);
  EXPECT_EQ(bins->points, 56u);  // the exponent bins; the zero bar is its own series
  const Series* zeros = p.find("histogram", "zeros");
  ASSERT_TRUE(zeros) << "no zero bar in the probe";
  EXPECT_EQ(zeros->points, 1u);
  // Underflow and headroom every step, and the picked tensor's at the
  // histogram steps (0, 4, 8, ...).
  const Series* lost = p.find("underflow", "lost unscaled");
  const Series* headroom = p.find("headroom", "headroom");
  ASSERT_TRUE(lost && headroom) << "no underflow panel in the probe";
  EXPECT_GE(lost->points, 16u);
  EXPECT_GE(headroom->points, 14u);  // the injected overflows may leave no finite gradient
  const Series* tensor = p.find("underflow", "fc1.weight lost unscaled");
  ASSERT_TRUE(tensor) << "no per-tensor underflow line";
  EXPECT_GE(tensor->points, 4u);

  Picture pic = Picture::load(path("shot.png"));
  ASSERT_FALSE(pic.empty());
  EXPECT_EQ(pic.width, 1600);
  EXPECT_EQ(pic.height, 1000);
  auto near = [&](const Series* s, uint8_t r, uint8_t g, uint8_t b) {
    return pic.count_near(s->x0, s->y0, s->x1, s->y1, r, g, b);
  };
  EXPECT_GT(near(loss, 120, 190, 255), 100u) << "no loss curve in the loss panel";
  EXPECT_GT(near(scale, 250, 200, 80), 100u) << "no loss-scale line";
  EXPECT_GT(near(scale, 240, 70, 70), 10u) << "no skipped-step markers";
  EXPECT_GT(near(bins, 210, 210, 230), 50u) << "no histogram bars";
  EXPECT_GT(near(headroom, 150, 230, 110), 100u) << "no headroom line";
  // An MLP has no BatchNorm: no running-statistics panel.
  EXPECT_EQ(p.find("batch_norm", "running_var"), nullptr) << "a BatchNorm panel for a model without BatchNorm";
  // The shaded fp16 normal range: green over the plot's background.
  EXPECT_GT(pic.count_near(bins->x0, bins->y0, bins->x1, bins->y1, 33, 70, 44, 14), 1000u) << "no fp16 range";
}

TEST_F(Studio, TrainsLeNet5FromThePicker) {
  // The convolutional job, picked by name as the "sample" combo does, on
  // the packaged Fashion-MNIST, with a histogram every 2 steps.
  Result r = run_studio("--sample lenet5 --batch 16 --histogram-interval 2 --until-step 4 --frames 3 --probe " +
                        path("probe.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("validation"), std::string::npos) << r.output;
  Probe p = read_probe(path("probe.json"));
  EXPECT_EQ(p.title.rfind("lenet5 ", 0), 0u) << p.title;
  EXPECT_NE(p.title.find("fp16, dynamic loss scaling"), std::string::npos) << p.title;
  EXPECT_EQ(p.status, "training");
  EXPECT_GE(p.records, 4u);
  EXPECT_GT(p.histograms, 0u);
  const Series* loss = p.find("loss", "smoothed");
  ASSERT_TRUE(loss) << "no loss series in the probe";
  EXPECT_GE(loss->points, 4u);
}

TEST_F(Studio, TrainsTheResNetFromThePickerWithBatchNormHistograms) {
  // The BatchNorm job, picked by name: its BN weights and biases are
  // parameters, so the histogram panel offers them with the convs'.
  Result r = run_studio("--sample resnet --batch 16 --histogram-interval 2 --until-step 4 --frames 3 --probe " +
                        path("probe.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("validation"), std::string::npos) << r.output;
  std::ifstream in(path("probe.json"));
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_EQ(j.value("title", "").rfind("resnet ", 0), 0u) << j.value("title", "");
  std::vector<std::string> tensors = j.value("histogram_tensors", std::vector<std::string>{});
  for (const char* name : {"conv1.weight", "bn1.weight", "layer2.0.bn2.bias", "layer2.0.downsample.1.weight"})
    EXPECT_NE(std::find(tensors.begin(), tensors.end(), name), tensors.end()) << name;
  // The BatchNorm panel: a row per BN layer (tests/ui/test_bn_statistics.cpp
  // checks the rows against the BufferStore's host read), read after steps
  // had run, every layer having folded in the same applied batches.
  ASSERT_TRUE(j.contains("bn_layers")) << "no BatchNorm panel data in the probe";
  const uint32_t bn_step = j.value("bn_step", 0u);
  std::vector<std::string> layers;
  for (const auto& l : j["bn_layers"]) {
    layers.push_back(l.value("layer", ""));
    const uint64_t batches = l.value("batches", uint64_t(0));
    EXPECT_GT(batches, 0u) << layers.back();
    EXPECT_LE(batches, bn_step) << layers.back();
    EXPECT_EQ(batches, j["bn_layers"][0].value("batches", uint64_t(0))) << layers.back();
    const auto var = l.value("running_var", std::vector<float>{});
    ASSERT_EQ(var.size(), 3u) << layers.back();
    EXPECT_GT(var[0], 0.0f) << layers.back();  // min / mean / max of a variance
    EXPECT_LE(var[0], var[1]);
    EXPECT_LE(var[1], var[2]);
  }
  for (const char* name : {"bn1", "layer2.0.bn2", "layer2.0.downsample.1"})
    EXPECT_NE(std::find(layers.begin(), layers.end(), name), layers.end()) << name;
  Probe p = read_probe(path("probe.json"));
  const Series* var = p.find("batch_norm", "running_var");
  ASSERT_TRUE(var) << "the BatchNorm panel was not drawn";
  EXPECT_EQ(var->points, layers.size());
}

// A bad flag or settings file exits 2 before any window opens:
// nothing is drawn, so no probe is written.
TEST_F(Studio, BadFlagValueExitsTwoBeforeAnyWindow) {
  Result r = run_studio("--batch 0 --frames 3 --probe " + path("probe.json"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--batch"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("validation"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("frames in"), std::string::npos) << "a window drew frames:\n" << r.output;
  EXPECT_FALSE(fs::exists(path("probe.json")));
}

TEST_F(Studio, ConfigThatFailsValidationExitsTwoBeforeAnyWindow) {
  std::ofstream(path("bad.yaml")) << "max_gradient_norm: 1.0\nmax_gradient_value: 0.5\n";
  Result r = run_studio("--config " + path("bad.yaml") + " --frames 3 --probe " + path("probe.json"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("max_gradient_norm"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("max_gradient_value"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("probe.json")));
}

// `vkamp-studio --version` with a display once waited for its window and
// ran into a 15 s timeout (status 124). Now it prints the version and exits 0.
TEST_F(Studio, VersionWithADisplayExitsAtOnce) {
  platform::ChildSpec spec = split_command_line(std::string(VKAMP_STUDIO) + " --version");
  spec.timeout_s = 15;
  Result r = run_child(spec);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.rfind("vkamp-studio ", 0), 0u) << r.output;
}

// An idle studio (paused: no run going, nothing new to draw) waits for
// input before each frame rather than redrawing flat out; the frames of a
// run in progress do not wait.
TEST_F(Studio, IdleFramesWaitForInput) {
  Result r = run_studio("--paused --frames 20");
  ASSERT_EQ(r.status, 0) << r.output;
  const size_t at = r.output.find(" idle frames waited for input");
  ASSERT_NE(at, std::string::npos) << r.output;
  const size_t start = r.output.rfind(' ', at - 1) + 1;
  const int idle = std::stoi(r.output.substr(start, at - start));
  // Of the 17 frames after the first three (drawn at once while the layout
  // settles), all but those that show a new status (loading, paused).
  EXPECT_GE(idle, 12) << r.output;
}

TEST_F(Studio, TrainsTheUsersCsvWithTrain) {
  // vkamp-train's job in the app: a CSV written here, the model sized to it.
  {
    std::ofstream f(path("table.csv"));
    f << "a,b,label\n";
    for (int i = 0; i < 400; ++i) f << (i % 7) * 0.3 << "," << (i % 5) * -0.2 << "," << (i % 7 > 3 ? "hi" : "lo") << "\n";
  }
  Result r = run_studio("--train " + path("table.csv") + " --batch 16 --until-step 8 --frames 3 --probe " +
                        path("probe.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("validation"), std::string::npos) << r.output;
  Probe p = read_probe(path("probe.json"));
  EXPECT_EQ(p.title.rfind("vkamp-train ", 0), 0u) << p.title;
  EXPECT_GE(p.records, 8u);
}

// The studio trains through the samples' run loop (app/run_loop.hpp),
// so the run flags do what they do in vkamp-train. At lr 0 the held-out
// loss never improves on the first epoch's: --early-stop 2 ends the run
// after epoch 3 of 10, --save-best keeps epoch 1's weights for --save (with
// vkamp-train's metadata), --metrics holds every step and evaluation, and
// --profile adds the kernel times to the summary.
TEST_F(Studio, HonoursMetricsSaveEarlyStopAndSaveBest) {
  {
    std::ofstream f(path("table.csv"));
    f << "a,b,label\n";
    for (int i = 0; i < 400; ++i) f << (i % 7) * 0.3 << "," << (i % 5) * -0.2 << "," << (i % 7 > 3 ? "hi" : "lo") << "\n";
  }
  Result r = run_studio("--train " + path("table.csv") + " --val-split 0.25 --batch 16 --epochs 10 --lr 0 "
                        "--early-stop 2 --save-best --save " + path("m.safetensors") + " --metrics " +
                        path("m.jsonl") + " --profile --no-progress --until-step 100000 --frames 3 --probe " +
                        path("probe.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("stopped early at epoch 3 (--early-stop 2): no better val_loss since epoch 1"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("epoch  3/10  train loss"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("epoch  4/10"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("by kernel (ms/step)"), std::string::npos) << "--profile:\n" << r.output;
  Probe p = read_probe(path("probe.json"));
  EXPECT_EQ(p.status, "finished");

  // --metrics: every step record, and the three evaluations.
  std::ifstream in(path("m.jsonl"));
  ASSERT_TRUE(in) << r.output;
  size_t steps = 0, skipped_in_first = 0;
  std::vector<nlohmann::json> evals;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << line;
    if (!j.contains("type")) {
      ++steps;
      if (evals.empty() && j.value("skipped", false)) ++skipped_in_first;
    } else if (j["type"] == "eval") {
      evals.push_back(j);
    }
  }
  ASSERT_EQ(evals.size(), 3u) << r.output;
  EXPECT_EQ(p.records, steps);
  EXPECT_EQ(evals[2].value("step", 0u), steps) << "the run ended at the third evaluation";
  for (size_t e = 0; e < 3; ++e) EXPECT_EQ(evals[e].value("epoch", 0u), e + 1);

  // --save with --save-best: epoch 1's weights, and what vkamp-predict reads.
  const vkamp::io::TensorFile saved = vkamp::io::read_safetensors(path("m.safetensors"));
  EXPECT_EQ(saved.metadata.at("vkamp.step"), std::to_string(evals[0].value("step", 0u) - skipped_in_first));
  const std::string classes = saved.metadata.at("vkamp.classes");
  EXPECT_NE(classes.find("\"hi\""), std::string::npos) << classes;
  EXPECT_NE(classes.find("\"lo\""), std::string::npos) << classes;
  EXPECT_NE(r.output.find("of epoch 1 (the best val_loss "), std::string::npos) << r.output;
}

// vkamp-finetune's job in the app: llama_tiny's random Llama folder and
// text, LoRA on the frozen base in fp16 with dynamic loss scaling. The
// histograms and the underflow lines are the adapters' (the only trained
// tensors), the held-out line is the validation loss, and the run ends as
// vkamp-finetune's does: adapters in PEFT's layout in --out.
TEST_F(Studio, FineTunesAHuggingFaceFolderWithLora) {
  const Result tiny = run_child(std::string("VKAMP_VALIDATION=1 ") + VKAMP_LLAMA_TINY + " --no-progress --out " +
                                path("tiny") + " --max-steps 0 --seq-len 32");
  ASSERT_EQ(tiny.status, 0) << tiny.output;
  Result r = run_studio("--finetune --model " + path("tiny") + "/base --data " + path("tiny") + "/text.txt --out " +
                        path("adapter") + " --seq-len 32 --max-steps 6 --eval-every 3 --histogram-interval 2 "
                        "--no-progress --until-step 100000 --frames 2 --probe " + path("probe.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  Probe p = read_probe(path("probe.json"));
  EXPECT_EQ(p.status, "finished");
  EXPECT_EQ(p.title.rfind("vkamp-finetune ", 0), 0u) << p.title;
  EXPECT_EQ(p.records, 6u);
  EXPECT_GT(p.histograms, 0u);
  const Series* adapter_line = nullptr;
  for (const Series& s : p.series)
    if (s.panel == "underflow" && s.name.find(".lora_") != std::string::npos &&
        s.name.find(" lost unscaled") != std::string::npos)
      adapter_line = &s;
  ASSERT_TRUE(adapter_line) << "no adapter's underflow line in the probe";
  EXPECT_GE(adapter_line->points, 3u);  // histogram steps 0, 2, 4
  for (const Series& s : p.series) EXPECT_EQ(s.name.find("mlp.up_proj.weight "), std::string::npos) << "a frozen tensor";
  EXPECT_NE(r.output.find("val loss"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("adapter_model.safetensors and adapter_config.json"), std::string::npos) << r.output;
  const vkamp::io::TensorFile a = vkamp::io::read_safetensors(path("adapter") + "/adapter_model.safetensors");
  EXPECT_EQ(a.tensors.size(), 2u * 7 * 2);  // A and B of 7 projections in each of 2 layers
}

// Conversations in the app: the first one as the chat template renders it,
// its trained tokens marked, shown before the run (and in the probe).
TEST_F(Studio, FineTuneOnConversationsShowsTheRenderedSample) {
  const Result tiny = run_child(std::string("VKAMP_VALIDATION=1 ") + VKAMP_LLAMA_TINY + " --no-progress --out " +
                                path("tiny") + " --max-steps 0 --seq-len 32");
  ASSERT_EQ(tiny.status, 0) << tiny.output;
  Result r = run_studio("--finetune --model " + path("tiny") + "/base --data " + std::string(VKAMP_EXAMPLES_DIR) +
                        "/llama_tiny/chat.jsonl --out " + path("adapter") + " --seq-len 64 --max-steps 2 "
                        "--no-progress --until-step 100000 --frames 2 --probe " + path("probe.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(path("probe.json"));
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.output;
  const std::string sample = j.value("training_sample", "");
  EXPECT_NE(sample.find("<|assistant|>"), std::string::npos) << sample;  // TinyLlama-Chat's (Zephyr's) template
  EXPECT_NE(sample.find("[["), std::string::npos) << sample;
}

// A run flag that cannot apply in a window is refused, not ignored.
TEST_F(Studio, RefusesGenerateOnlyWithExitTwo) {
  Result r = run_studio("--sample charlm --generate-only --init-from " + path("none.safetensors") +
                        " --frames 3 --probe " + path("probe.json"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--generate-only"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("vkamp-generate"), std::string::npos) << r.output;
}

TEST_F(Studio, RefusesDryRunWithExitTwo) {
  Result r = run_studio("--sample fashion_mlp --dry-run --frames 3 --probe " + path("probe.json"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--dry-run"), std::string::npos) << r.output;
}

TEST_F(Studio, TrainsCharlmAndShowsItsGeneratedText) {
  {
    std::ofstream f(path("t.txt"));
    for (int i = 0; i < 300; ++i) f << "the cat sat on the mat. " << (i % 7) << "\n";
  }
  // --until-step past the run's end: the frames are counted once it has finished.
  Result r = run_studio("--sample charlm --text " + path("t.txt") +
                        " --n-layer 1 --n-head 2 --n-embd 16 --block-size 16 --batch 4 --max-steps 12 --eval-every 6"
                        " --generate 30 --histogram-interval 4 --until-step 100000 --frames 3 --probe " +
                        path("probe.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(path("probe.json"));
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_EQ(j.value("title", "").rfind("charlm ", 0), 0u) << j.value("title", "");
  EXPECT_EQ(j.value("status", ""), "finished");
  EXPECT_GE(j.value("evals", 0), 2) << "the validation loss at steps 6 and 12";
  const std::string text = j.value("generated_text", "");
  EXPECT_EQ(text.size(), 31u) << "a new line and 30 characters: " << text;
  std::vector<std::string> tensors = j.value("histogram_tensors", std::vector<std::string>{});
  for (const char* name : {"transformer.h.0.attn.c_attn.weight", "transformer.h.0.mlp.c_fc.weight"})
    EXPECT_NE(std::find(tensors.begin(), tensors.end(), name), tensors.end()) << name;
}

TEST_F(Studio, UnknownSampleIsShownAndExitsTwo) {
  Result r = run_studio("--sample nosuch --frames 3 --probe " + path("probe.json"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("fashion_mlp, lenet5, resnet, linreg"), std::string::npos)
      << "the message should list the samples:\n" << r.output;
}

TEST_F(Studio, WithoutADisplayItSaysWhatToDo) {
  if (platform::running_on_windows()) GTEST_SKIP() << "a Windows process always has a desktop to open windows on";
  platform::ChildSpec spec = split_command_line(std::string(VKAMP_STUDIO) + " --frames 1");
  spec.env = {{"DISPLAY", std::nullopt}, {"WAYLAND_DISPLAY", std::nullopt}};
  Result r = run_child(spec);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("--report"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace vkamp::test
