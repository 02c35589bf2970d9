// What vkamp-train prints and when it stops, and vkamp-predict's reports,
// as a user runs them (output piped, so not a terminal): one line per
// epoch with no carriage returns or escape codes, --quiet, --profile,
// --early-stop, --save-best checked through vkamp-predict, R², the
// confusion matrix and per-class scores against counts taken here from
// the predictions, predictions on stdout, and a BatchNorm model's running
// statistics through --save and vkamp-predict. Each tool runs as a child
// process with the validation layer on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli_test.hpp"
#include "support/test_paths.hpp"
#include "vkamp/io/safetensors.hpp"

namespace {

using Result = vkamp::test::ChildResult;
using vkamp::test::rejected;

std::string tool_path(const char* tool) { return VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/" + tool; }

Result run_tool(const char* tool, const std::string& args) {
  return vkamp::test::run_child("VKAMP_VALIDATION=1 " + tool_path(tool) + " " + args);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return lines_of(s.str());
}

// The output's lines that start with `prefix`.
std::vector<std::string> lines_starting(const std::string& out, const std::string& prefix) {
  std::vector<std::string> found;
  for (const std::string& l : lines_of(out))
    if (l.rfind(prefix, 0) == 0) found.push_back(l);
  return found;
}

// The word after `prefix` ("val accuracy 87.50%" -> "87.50"), or "".
std::string number_after(const std::string& text, const std::string& prefix) {
  const size_t at = text.find(prefix);
  if (at == std::string::npos) return "";
  std::istringstream in(text.substr(at + prefix.size()));
  std::string v;
  in >> v;
  while (!v.empty() && (v.back() == '%' || v.back() == ',' || v.back() == ')')) v.pop_back();
  return v;
}

const char* kClasses[] = {"ant", "bee", "cow"};

// Rows of 4 features labelled by the arg-max of a fixed linear map;
// `shift` relabels class c as c + shift (mod 3): a set that teaches the
// wrong classes, so that the held-out accuracy falls as training goes on.
void write_table(const std::string& path, int rows, uint32_t seed, bool labels = true, int shift = 0) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> n;
  const double w[3][4] = {{1, -2, 0.5, 1}, {-1, 1, 2, 0}, {0.5, 0.5, -1, -2}};
  std::ofstream f(path);
  f << "a,b,c,d" << (labels ? ",kind" : "") << "\n";
  f.precision(9);
  for (int r = 0; r < rows; ++r) {
    double x[4];
    for (double& e : x) e = n(gen);
    int best = 0;
    double top = -1e300;
    for (int c = 0; c < 3; ++c) {
      double s = 0;
      for (int i = 0; i < 4; ++i) s += w[c][i] * x[i];
      if (s > top) top = s, best = c;
    }
    f << x[0] << "," << x[1] << "," << x[2] << "," << x[3];
    if (labels) f << "," << kClasses[(best + shift) % 3];
    f << "\n";
  }
}

class TrainingOutput : public vkamp::test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    write_table(path("train.csv"), 640, 1);  // 10 steps of 64 per epoch
    write_table(path("test.csv"), 300, 2);
  }
  std::string data() const { return " --train " + path("train.csv") + " --test " + path("test.csv") + " --label kind"; }
};

// Piped, the progress bar is on (its lines every 10%) and the epoch lines
// go to stdout: none of it may hold a carriage return or an escape code.
TEST_F(TrainingOutput, OneLinePerEpochAndNoTerminalCodesWhenPiped) {
  Result r = run_tool("vkamp-train", data() + " --epochs 4");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find('\r'), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("validation"), std::string::npos) << r.output;
  const std::vector<std::string> epochs = lines_starting(r.output, "epoch ");
  ASSERT_EQ(epochs.size(), 4u) << r.output;
  const std::regex line(R"(epoch (\d)/4  train loss \d+\.\d{4}  val loss \d+\.\d{4}  val accuracy \d+\.\d\d%  )"
                        R"(skipped \d+  scale \d+)");
  for (size_t i = 0; i < epochs.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(epochs[i], m, line)) << epochs[i];
    EXPECT_EQ(m[1], std::to_string(i + 1));
  }
  // The last line's accuracy is the run's.
  EXPECT_EQ(number_after(epochs.back(), "val accuracy "), number_after(r.output, "held-out accuracy "));
  EXPECT_EQ(r.output.find("by kernel"), std::string::npos) << "--profile's: " << r.output;
  EXPECT_EQ(r.output.find("commands per step"), std::string::npos) << r.output;
}

TEST_F(TrainingOutput, QuietPrintsTheSummaryOnlyAndProfileAddsTheKernels) {
  Result q = run_tool("vkamp-train", data() + " --epochs 2 --quiet");
  ASSERT_EQ(q.status, 0) << q.output;
  EXPECT_TRUE(lines_starting(q.output, "epoch ").empty()) << q.output;
  for (const char* chatter : {"train loss", "vkamp-train", "[", "by kernel", "commands per step"})
    EXPECT_EQ(q.output.find(chatter), std::string::npos) << chatter << " in:\n" << q.output;
  EXPECT_NE(q.output.find("held-out accuracy "), std::string::npos) << q.output;
  EXPECT_NE(q.output.find("samples/s"), std::string::npos) << q.output;
  EXPECT_LE(lines_of(q.output).size(), 7u) << q.output;

  Result p = run_tool("vkamp-train", data() + " --epochs 1 --no-progress --profile");
  ASSERT_EQ(p.status, 0) << p.output;
  EXPECT_NE(p.output.find("by kernel (ms/step):"), std::string::npos) << p.output;
  EXPECT_NE(p.output.find("commands per step: "), std::string::npos) << p.output;
}

// A Cerebras Model Zoo trainer config runs as written (a few of its steps):
// one warning names the sections vkamp does not use, the optimizer, the
// schedule and the batch are the file's; a misspelt key stops the run
// with exit status 2, naming the file, the line and the closest name.
TEST_F(TrainingOutput, ModelZooTrainerConfigRunsAsWritten) {
  const std::string config = VKAMP_TEST_DIR(VKAMP_EXAMPLES_DIR) + "/configs/modelzoo_fashion_mlp.yaml";
  Result r = run_tool("vkamp-train", "--config " + config + data() + " --max-steps 6 --no-progress --metrics " +
                                         path("m.jsonl"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(lines_starting(r.output, config + ": warning: vkamp does not use these Model Zoo settings").size(), 1u)
      << r.output;
  EXPECT_NE(r.output.find("trainer.init.model (line 20)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(", batch 128, "), std::string::npos) << r.output;  // the train_dataloader's
  // --max-steps replaces the file's 1872 steps: the header says so, with the
  // epochs of 640 rows at 128 that takes, and that the schedule's
  // total_iters no longer matches.
  EXPECT_NE(r.output.find(", 6 steps (--max-steps; 1.2 epochs); the schedule's total_iters (1872) "
                          "no longer matches the run: vkamp's cosine reaches 0 at step 6, "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("held-out accuracy "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("validation"), std::string::npos) << r.output;
  // Six updates of the file's batch of 128 at the cosine schedule's rates.
  std::vector<double> lrs;
  for (const std::string& l : read_lines(path("m.jsonl"))) {
    const nlohmann::json j = nlohmann::json::parse(l);
    if (!j.contains("type")) lrs.push_back(j.at("lr").get<double>());  // a step's record
  }
  ASSERT_EQ(lrs.size(), 6u) << r.output;
  EXPECT_FLOAT_EQ(float(lrs.front()), 0.05f);
  EXPECT_LT(lrs.back(), lrs.front() / 2);

  const std::string typo = path("typo.yaml");
  std::ofstream(typo) << "trainer:\n  init:\n    optimizer:\n      SGD:\n        lr: 0.1\n        momentun: 0.9\n";
  EXPECT_TRUE(rejected(run_tool("vkamp-train", "--config " + typo + data()),
                       typo + ":6: unknown key 'trainer.init.optimizer.SGD.momentun' (did you mean "
                              "'trainer.init.optimizer.SGD.momentum'?)"));
}

// "1.23%" as a share (0.0123); "<0.01%" as an upper bound, -1.
double share_of(const std::string& text) {
  if (text.rfind("<", 0) == 0) return -1;
  return std::stod(text) / 100;
}

// The summary's underflow lines say what the --metrics step records hold:
// the mean and last share of the gradient elements the scale saved, the
// mean subnormal and zero shares, and the fewest doublings of headroom of a
// step without overflow; the tensor named is one the log's per-tensor
// records name.
TEST_F(TrainingOutput, SummarySaysWhatTheScaleSavedAndTheHeadroom) {
  Result r =
      run_tool("vkamp-train", data() + " --epochs 2 --quiet --histogram-interval 5 --metrics " + path("m.jsonl"));
  ASSERT_EQ(r.status, 0) << r.output;
  const std::vector<std::string> under = lines_starting(r.output, "  underflow: "),
                                 head = lines_starting(r.output, "  headroom: ");
  ASSERT_EQ(under.size(), 1u) << r.output;
  ASSERT_EQ(head.size(), 1u) << r.output;
  const std::regex line(R"(  underflow: lost unscaled (<?[\d.]+)% \(last step (<?[\d.]+)%\), the gradients the loss )"
                        R"(scale kept from flushing to 0 in fp16; subnormal (<?[\d.]+)%, zeros (<?[\d.]+)% \(means )"
                        R"(over the steps\)(; most lost unscaled: (\S+) \(.*\))?)");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(under[0], m, line)) << under[0];

  double lost = 0, last = 0, subnormal = 0, zeros = 0;
  int steps = 0, fewest = 1 << 30;
  std::vector<std::string> tensors;
  for (const std::string& l : read_lines(path("m.jsonl"))) {
    const auto j = nlohmann::json::parse(l);
    if (j.value("type", "") == "underflow") {
      tensors.push_back(j["tensor"]);
      EXPECT_GE(j["lost_unscaled"].get<double>(), 0) << l;
      EXPECT_LE(j["zeros"].get<double>(), 1) << l;
      continue;
    }
    if (j.contains("type")) continue;
    ++steps;
    lost += j["lost_unscaled"].get<double>();
    last = j["lost_unscaled"].get<double>();
    subnormal += j["subnormal"].get<double>();
    zeros += j["zeros"].get<double>();
    if (!j["overflow"].get<bool>() && !j["headroom"].is_null()) fewest = std::min(fewest, j["headroom"].get<int>());
  }
  ASSERT_GT(steps, 0);
  ASSERT_FALSE(tensors.empty()) << "per-tensor records every 5 steps";
  auto same = [](const std::string& shown, double share) {
    const double s = share_of(shown);
    if (s < 0) return share < 1e-4;
    return std::abs(s - share) <= 0.00005 + 1e-12;  // printed to 0.01%
  };
  EXPECT_TRUE(same(m[1], lost / steps)) << under[0] << " vs " << lost / steps;
  EXPECT_TRUE(same(m[2], last)) << under[0] << " vs " << last;
  EXPECT_TRUE(same(m[3], subnormal / steps)) << under[0] << " vs " << subnormal / steps;
  EXPECT_TRUE(same(m[4], zeros / steps)) << under[0] << " vs " << zeros / steps;
  EXPECT_GT(zeros, 0) << "ReLUs leave exact zeros";
  if (m[6].matched) {
    EXPECT_NE(std::find(tensors.begin(), tensors.end(), m[6].str()), tensors.end()) << m[6];
  }
  ASSERT_LT(fewest, 1 << 30);
  EXPECT_EQ(head[0], "  headroom: " + std::to_string(fewest) + (fewest == 1 ? " doubling" : " doublings") +
                         " of the loss scale left before the largest gradient overflows, at the tightest step "
                         "without overflow");
}

// --loss-scale per-layer: the summary gives each layer's scale; a model
// where one gradient would sum two layers' scales (a residual add across a
// layer) is refused with exit status 2, naming the node.
TEST_F(TrainingOutput, PerLayerScalingPrintsEachLayersScaleAndRefusesAResidual) {
  Result r = run_tool("vkamp-train", data() + " --epochs 1 --quiet --precision fp16 --loss-scale per-layer");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("per-layer loss scales (layer: scale, amax of its window, overflows): "), std::string::npos)
      << r.output;
  std::ofstream(path("residual.yaml")) << "input: {name: x, shape: [4]}\n"
                                          "params:\n"
                                          "  - {name: fc1.weight, dims: [4, 4]}\n"
                                          "  - {name: fc2.weight, dims: [4, 4]}\n"
                                          "  - {name: fc3.weight, dims: [3, 4]}\n"
                                          "nodes:\n"
                                          "  - {name: fc1, op: linear, inputs: [x, fc1.weight]}\n"
                                          "  - {name: fc2, op: linear, inputs: [fc1, fc2.weight]}\n"
                                          "  - {name: r, op: add, inputs: [fc2, fc1]}\n"
                                          "  - {name: fc3, op: linear, inputs: [r, fc3.weight]}\n"
                                          "output: fc3\n";
  EXPECT_TRUE(rejected(run_tool("vkamp-train", data() + " --model " + path("residual.yaml") +
                                                   " --epochs 1 --precision fp16 --loss-scale per-layer"),
                       "node 'r' joins the outputs of layers 'fc2' and 'fc1'"));
}

// At lr 0 the held-out accuracy never improves on the first epoch's: with
// patience 2 the run stops after epoch 3 of 10, and says so.
TEST_F(TrainingOutput, EarlyStopEndsARunThatStopsImproving) {
  Result r = run_tool("vkamp-train", data() + " --no-progress --epochs 10 --lr 0 --early-stop 2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(lines_starting(r.output, "epoch ").size(), 3u) << r.output;
  EXPECT_NE(r.output.find("stopped early at epoch 3 (--early-stop 2): no better val_loss since epoch 1"),
            std::string::npos)
      << "the default monitor is the held-out loss:\n" << r.output;
  EXPECT_NE(r.output.find("steps 30 (applied 30,"), std::string::npos) << "3 epochs of 10 steps:\n" << r.output;

  // A run that keeps improving is not stopped (and says nothing of it).
  Result full = run_tool("vkamp-train", data() + " --no-progress --epochs 3 --lr 0.01 --early-stop 5");
  ASSERT_EQ(full.status, 0) << full.output;
  EXPECT_EQ(lines_starting(full.output, "epoch ").size(), 3u) << full.output;
  EXPECT_EQ(full.output.find("stopped early"), std::string::npos) << full.output;
}

// Trained on wrong labels, the model gets worse on the true ones epoch
// after epoch: the best epoch is an early one, and the saved weights give,
// through vkamp-predict, that epoch's accuracy, not the last one's.
TEST_F(TrainingOutput, SaveBestSavesTheBestEpochsWeights) {
  write_table(path("wrong.csv"), 640, 1, true, 1);
  Result r = run_tool("vkamp-train", " --train " + path("wrong.csv") + " --test " + path("test.csv") +
                                         " --label kind --no-progress --epochs 6 --lr 0.01 --save-best --save " +
                                         path("best.safetensors") + " --early-stop-monitor val_accuracy");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::vector<std::string> epochs = lines_starting(r.output, "epoch ");
  ASSERT_EQ(epochs.size(), 6u) << r.output;
  size_t best = 0;
  std::vector<double> acc;
  for (const std::string& l : epochs) acc.push_back(std::stod(number_after(l, "val accuracy ")));
  for (size_t i = 1; i < acc.size(); ++i)
    if (acc[i] > acc[best]) best = i;
  ASSERT_LT(acc.back(), acc[best]) << "the test needs a last epoch worse than the best:\n" << r.output;
  const std::string best_text = number_after(epochs[best], "val accuracy ");
  EXPECT_NE(r.output.find("of epoch " + std::to_string(best + 1) + " (the best val_accuracy " + best_text + "%)"),
            std::string::npos)
      << r.output;
  const vkamp::io::TensorFile saved = vkamp::io::read_safetensors(path("best.safetensors"));
  EXPECT_EQ(saved.metadata.at("vkamp.step"), std::to_string(10 * (best + 1)));

  Result p = run_tool("vkamp-predict", "--weights " + path("best.safetensors") + " --data " + path("test.csv"));
  ASSERT_EQ(p.status, 0) << p.output;
  EXPECT_EQ(number_after(p.output, "accuracy "), best_text) << r.output << p.output;
}

// A BatchNorm model: the saved file holds PyTorch's tensors (the running
// statistics in F32, the counter as I64), --save-best keeps the best
// epoch's buffers with its weights, and vkamp-predict, normalising with
// those running statistics, reproduces that epoch's accuracy.
TEST_F(TrainingOutput, BatchNormModelSavesItsRunningStatisticsAndPredictReproducesTheAccuracy) {
  Result r = run_tool("vkamp-train", data() + " --model 4-16-bnr-3 --no-progress --epochs 3 --lr 0.1 --save-best --save " +
                                         path("bn.safetensors"));
  ASSERT_EQ(r.status, 0) << r.output;
  const std::vector<std::string> epochs = lines_starting(r.output, "epoch ");
  ASSERT_EQ(epochs.size(), 3u) << r.output;
  // --save-best follows the default monitor, the held-out loss: the
  // epoch with the lowest one (the first of equals) is the one saved.
  std::string best_text;
  double best_loss = INFINITY, best = -1;
  for (const std::string& l : epochs)
    if (std::stod(number_after(l, "val loss ")) < best_loss) {
      best_loss = std::stod(number_after(l, "val loss "));
      best = std::stod(number_after(l, "val accuracy "));
      best_text = number_after(l, "val accuracy ");
    }
  EXPECT_GT(best, 80.0) << r.output;
  const vkamp::io::TensorFile saved = vkamp::io::read_safetensors(path("bn.safetensors"));
  for (const char* name : {"bn1.running_mean", "bn1.running_var"}) {
    ASSERT_NE(saved.find(name), nullptr) << name;
    EXPECT_EQ(saved.find(name)->dtype, vkamp::io::DType::F32) << name;
    EXPECT_EQ(saved.find(name)->shape, (std::vector<uint64_t>{16})) << name;
  }
  ASSERT_NE(saved.find("bn1.num_batches_tracked"), nullptr);
  EXPECT_EQ(saved.find("bn1.num_batches_tracked")->dtype, vkamp::io::DType::I64);
  EXPECT_EQ(saved.find("bn1.weight")->shape, (std::vector<uint64_t>{16}));

  Result p = run_tool("vkamp-predict", "--weights " + path("bn.safetensors") + " --data " + path("test.csv"));
  ASSERT_EQ(p.status, 0) << p.output;
  EXPECT_EQ(number_after(p.output, "accuracy "), best_text) << r.output << p.output;
}

// --sync-bn in a world of one has nothing to merge: plain BatchNorm, the
// same saved weights and running statistics bit for bit (two ranks:
// tests/mpi, case sync_bn).
TEST_F(TrainingOutput, SyncBnOnOneProcessIsPlainBatchNorm) {
  const std::string run = data() + " --model 4-16-bnr-3 --no-progress --epochs 2 --lr 0.1 --save ";
  Result plain = run_tool("vkamp-train", run + path("plain.safetensors"));
  ASSERT_EQ(plain.status, 0) << plain.output;
  Result synced = run_tool("vkamp-train", run + path("synced.safetensors") + " --sync-bn");
  ASSERT_EQ(synced.status, 0) << synced.output;
  const vkamp::io::TensorFile a = vkamp::io::read_safetensors(path("plain.safetensors"));
  const vkamp::io::TensorFile b = vkamp::io::read_safetensors(path("synced.safetensors"));
  ASSERT_NE(a.find("bn1.running_var"), nullptr);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (const vkamp::io::Tensor& t : a.tensors) {
    ASSERT_NE(b.find(t.name), nullptr) << t.name;
    EXPECT_EQ(t.data, b.find(t.name)->data) << t.name;
  }
  EXPECT_EQ(lines_starting(plain.output, "epoch "), lines_starting(synced.output, "epoch "));
}

TEST_F(TrainingOutput, MisplacedBatchNormIsRefusedWithExitStatusTwo) {
  EXPECT_TRUE(rejected(run_tool("vkamp-train", data() + " --model 4-bn-3 --epochs 1"),
                       "a BatchNorm follows a linear or conv layer"));
}

TEST_F(TrainingOutput, EarlyStopAndSaveBestNeedWhatTheyWatchAndWrite) {
  const std::string no_held_out = " --no-progress --train " + path("train.csv") + " --label kind --epochs 1";
  EXPECT_TRUE(rejected(run_tool("vkamp-train", no_held_out + " --early-stop 2"), "--early-stop"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", no_held_out + " --early-stop 2"), "--val-split"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", no_held_out + " --save-best --save " + path("m.safetensors")),
                       "--save-best watches the held-out metric"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", data() + " --save-best"), "give --save FILE.safetensors"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", data() + " --early-stop x"), "early"));
  // A monitor the run does not measure is refused before training.
  EXPECT_TRUE(rejected(run_tool("vkamp-train", data() + " --early-stop 2 --early-stop-monitor val_mse"),
                       "val_mse watches a regression"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", data() + " --early-stop-monitor accuracy"), "val_accuracy"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", data() + " --early-stop-min-delta -0.1"), "--early-stop-min-delta"));
}

// --early-stop-monitor val_accuracy stops on the coarse accuracy, the
// default val_loss on the loss, and the summary names the monitor, the best
// value and its epoch; --early-stop-min-delta asks for more than a tie.
TEST_F(TrainingOutput, EarlyStopWatchesItsMonitorAndTheSummaryNamesIt) {
  Result r = run_tool("vkamp-train", data() + " --no-progress --epochs 6 --lr 0.01 --early-stop 20 "
                                              "--early-stop-monitor val_accuracy");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::vector<std::string> epochs = lines_starting(r.output, "epoch ");
  ASSERT_EQ(epochs.size(), 6u) << r.output;
  size_t best = 0;
  std::vector<double> acc;
  for (const std::string& l : epochs) acc.push_back(std::stod(number_after(l, "val accuracy ")));
  for (size_t i = 1; i < acc.size(); ++i)
    if (acc[i] > acc[best]) best = i;
  EXPECT_NE(r.output.find("  best val_accuracy " + number_after(epochs[best], "val accuracy ") + "% at epoch " +
                          std::to_string(best + 1) + "\n"),
            std::string::npos)
      << r.output;

  // A min delta larger than any change: nothing after the first epoch counts.
  Result strict = run_tool("vkamp-train", data() + " --no-progress --epochs 10 --lr 0.01 --early-stop 2 "
                                                   "--early-stop-min-delta 100");
  ASSERT_EQ(strict.status, 0) << strict.output;
  EXPECT_EQ(lines_starting(strict.output, "epoch ").size(), 3u) << strict.output;
  EXPECT_NE(strict.output.find("no better val_loss by more than 100 since epoch 1"), std::string::npos)
      << strict.output;
  const std::string first_loss = number_after(lines_starting(strict.output, "epoch ")[0], "val loss ");
  EXPECT_NE(strict.output.find("  best val_loss " + first_loss + " at epoch 1 (val accuracy "), std::string::npos)
      << strict.output;
}

// --eval-iters 1: each in-run evaluation reads one batch of the held-out
// set, and its line and the summary's best say so; the final accuracy
// reads all of it.
TEST_F(TrainingOutput, SampledEvaluationsSayHowMuchOfTheSetTheyRead) {
  Result r = run_tool("vkamp-train", data() + " --no-progress --epochs 2 --batch 16 --eval-iters 1");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::vector<std::string> epochs = lines_starting(r.output, "epoch ");
  ASSERT_EQ(epochs.size(), 2u) << r.output;
  for (const std::string& l : epochs) EXPECT_NE(l.find("% on 1 of "), std::string::npos) << l;
  const std::string of = number_after(epochs[0], "% on 1 of ");
  ASSERT_FALSE(of.empty()) << epochs[0];
  EXPECT_GT(std::stoi(of), 1) << epochs[0];
  EXPECT_NE(r.output.find("evaluated on 1 of " + of + " batches (--eval-iters)"), std::string::npos) << r.output;
  EXPECT_EQ(lines_starting(r.output, "held-out accuracy ").size(), 1u) << r.output;

  // Without --eval-iters the lines read the whole set and say nothing of it.
  Result whole = run_tool("vkamp-train", data() + " --no-progress --epochs 1 --batch 16");
  ASSERT_EQ(whole.status, 0) << whole.output;
  EXPECT_EQ(whole.output.find(" batches"), std::string::npos) << whole.output;
}

// R² from the written predictions, in double here: 1 - SSres / SStot.
TEST_F(TrainingOutput, PredictReportsR2NextToTheMse) {
  {
    std::mt19937 gen(4);
    std::normal_distribution<double> n;
    std::ofstream f(path("reg.csv"));
    f << "a,b,c,y\n";
    for (int r = 0; r < 640; ++r) {
      const double a = n(gen), b = n(gen), c = n(gen);
      f << a << "," << b << "," << c << "," << (a - 0.5 * b + 0.3 * n(gen)) << "\n";
    }
  }
  Result tr = run_tool("vkamp-train", "--no-progress --train " + path("reg.csv") +
                                          " --task regress --model 3-1 --epochs 10 --lr 0.05 --save " +
                                          path("r.safetensors"));
  ASSERT_EQ(tr.status, 0) << tr.output;
  Result p = run_tool("vkamp-predict", "--weights " + path("r.safetensors") + " --data " + path("reg.csv") +
                                           " --out " + path("out.csv"));
  ASSERT_EQ(p.status, 0) << p.output;
  const std::string printed = number_after(p.output, "r2 ");
  ASSERT_FALSE(printed.empty()) << p.output;

  const std::vector<std::string> targets = read_lines(path("reg.csv")), out = read_lines(path("out.csv"));
  ASSERT_EQ(out.size(), 641u);
  EXPECT_EQ(out[0], "y");
  std::vector<double> y, yhat;
  for (size_t r = 1; r < targets.size(); ++r) {
    y.push_back(std::stod(targets[r].substr(targets[r].rfind(',') + 1)));
    yhat.push_back(std::stod(out[r]));
  }
  double mean = 0, res = 0, tot = 0;
  for (double v : y) mean += v / double(y.size());
  for (size_t i = 0; i < y.size(); ++i) res += (yhat[i] - y[i]) * (yhat[i] - y[i]), tot += (y[i] - mean) * (y[i] - mean);
  const double r2 = 1 - res / tot;
  EXPECT_NEAR(std::stod(printed), r2, 2e-6) << p.output;
  EXPECT_GT(r2, 0.8) << "y is mostly a linear function of a and b";
}

// The confusion matrix and precision, recall and F1, against counts taken
// from the written predictions and the file's labels.
TEST_F(TrainingOutput, ReportClassesPrintsTheConfusionMatrixOfThePredictions) {
  Result tr = run_tool("vkamp-train", data() + " --no-progress --epochs 2 --save " + path("m.safetensors"));
  ASSERT_EQ(tr.status, 0) << tr.output;
  Result p = run_tool("vkamp-predict", "--weights " + path("m.safetensors") + " --data " + path("test.csv") +
                                           " --report-classes --out " + path("pred.csv"));
  ASSERT_EQ(p.status, 0) << p.output;
  const std::vector<std::string> labels = read_lines(path("test.csv")), pred = read_lines(path("pred.csv"));
  ASSERT_EQ(pred.size(), labels.size());
  uint64_t m[3][3] = {};
  auto index = [](const std::string& name) {
    for (int c = 0; c < 3; ++c)
      if (name == kClasses[c]) return c;
    return -1;
  };
  for (size_t r = 1; r < labels.size(); ++r) {
    const int t = index(labels[r].substr(labels[r].rfind(',') + 1)), q = index(pred[r].substr(0, pred[r].find(',')));
    ASSERT_GE(t, 0);
    ASSERT_GE(q, 0);
    ++m[t][q];
  }
  const std::vector<std::string> out = lines_of(p.output);
  size_t at = 0;
  while (at < out.size() && out[at].rfind("confusion matrix", 0) != 0) ++at;
  ASSERT_LT(at + 8, out.size()) << p.output;
  for (int t = 0; t < 3; ++t) {
    std::istringstream row(out[at + 2 + t]);
    std::string name;
    row >> name;
    EXPECT_EQ(name, kClasses[t]);
    for (int q = 0; q < 3; ++q) {
      uint64_t count = 0;
      row >> count;
      EXPECT_EQ(count, m[t][q]) << "true " << kClasses[t] << ", predicted " << kClasses[q] << ":\n" << p.output;
    }
  }
  EXPECT_NE(out[at + 5].find("precision"), std::string::npos) << out[at + 5];
  for (int c = 0; c < 3; ++c) {
    std::istringstream row(out[at + 6 + c]);
    std::string name;
    double precision = 0, recall = 0, f1 = 0;
    uint64_t support = 0;
    row >> name >> precision >> recall >> f1 >> support;
    const double tp = double(m[c][c]);
    const double predicted = double(m[0][c] + m[1][c] + m[2][c]), actual = double(m[c][0] + m[c][1] + m[c][2]);
    EXPECT_EQ(name, kClasses[c]);
    EXPECT_NEAR(precision, tp / predicted, 1e-4) << out[at + 6 + c];
    EXPECT_NEAR(recall, tp / actual, 1e-4) << out[at + 6 + c];
    EXPECT_NEAR(f1, 2 * precision * recall / (precision + recall), 2e-4) << out[at + 6 + c];
    EXPECT_EQ(support, uint64_t(actual));
  }

  // No labels to count, or no classes: exit status 2, naming the file.
  write_table(path("bare.csv"), 20, 3, /*labels=*/false);
  EXPECT_TRUE(rejected(run_tool("vkamp-predict", "--weights " + path("m.safetensors") + " --data " +
                                                     path("bare.csv") + " --report-classes"),
                       "bare.csv: --report-classes needs the labels"));
}

// Unlabelled rows and no --out: the CSV --out would write goes to stdout,
// and nothing else does.
TEST_F(TrainingOutput, PredictionsGoToStdoutWithNeitherOutNorLabels) {
  Result tr = run_tool("vkamp-train", data() + " --no-progress --epochs 1 --save " + path("m.safetensors"));
  ASSERT_EQ(tr.status, 0) << tr.output;
  write_table(path("bare.csv"), 50, 3, /*labels=*/false);
  const std::string args = "--weights " + path("m.safetensors") + " --data " + path("bare.csv");
  Result p = vkamp::test::run_child("VKAMP_VALIDATION=1 " + tool_path("vkamp-predict") + " " + args + " 2> " +
                                    path("err.txt"));
  ASSERT_EQ(p.status, 0) << p.output;
  const std::vector<std::string> err = read_lines(path("err.txt"));
  for (const std::string& l : err) EXPECT_EQ(l.find("validation"), std::string::npos) << l;
  Result f = run_tool("vkamp-predict", args + " --out " + path("pred.csv"));
  ASSERT_EQ(f.status, 0) << f.output;
  const std::vector<std::string> lines = lines_of(p.output);
  EXPECT_EQ(lines.size(), 51u) << p.output;
  EXPECT_EQ(lines, read_lines(path("pred.csv")));
  EXPECT_EQ(lines.at(0), "class,p_ant,p_bee,p_cow");
}

}  // namespace
