// The offscreen dashboard (--report): a synthetic run drawn without any
// window or X server, with the validation layer on. The picture must hold
// the data: the plotted series have the run's points and ranges, and the
// plot areas show the line, marker, bar and band colours.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "dashboard.hpp"
#include "picture.hpp"
#include "report.hpp"
#include "run_history.hpp"
#include "vkamp/error.hpp"
#include "vkamp/instance.hpp"
#include "vkamp/train/gpu_state.hpp"

namespace vkamp::test {
namespace {

namespace fs = std::filesystem;

// 300 steps: the loss decays, the scale backs off at two injected
// overflows (skipped) and grows once; two tensors' histograms; two evals.
ui::RunHistory synthetic_run() {
  ui::RunHistory h;
  h.title = "synthetic";
  h.samples_per_step = 64;
  h.budget = 298;
  h.histogram_interval = 10;
  std::mt19937 gen(7);
  std::normal_distribution<float> noise(0, 0.05f);
  float scale = 65536;
  for (uint32_t s = 0; s < 300; ++s) {
    train::StepMetrics m;
    m.step = s;
    m.overflow = m.skipped = s == 100 || s == 200;
    m.loss = m.skipped ? INFINITY : 2.0f * std::exp(-float(s) / 80.0f) + 0.3f + noise(gen);
    if (s == 101 || s == 201) scale /= 2;
    if (s == 250) scale *= 2;
    m.loss_scale = scale;
    m.grad_norm = m.skipped ? INFINITY : 1.0f + noise(gen);
    m.step_time_ms = 5 + noise(gen);
    m.applied = s + 1 - (s >= 100) - (s >= 200);
    h.add(m);
  }
  for (const char* name : {"fc1.weight", "fc1.bias"}) {
    train::TensorHistogram t;
    t.step = 290;
    t.tensor = name;
    t.loss_scale = scale;
    for (int e = -30; e <= -5; ++e) t.bins[e - train::kHistMinExp] = 1000 - 30 * std::abs(e + 15);
    t.bins[train::kHistZero] = 500;
    h.add(t);
  }
  h.evals = {{150, 0.80}, {300, 0.86}};
  h.status = "finished";
  return h;
}

class Report : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("VKAMP_VALIDATION", "1", 1);
    unsetenv("DISPLAY");  // nothing here may need an X server
    messages_ = validation_message_count();
    path_ = (fs::temp_directory_path() / ("vkamp-report-" + std::to_string(getpid()) + ".png")).string();
  }
  void TearDown() override {
    fs::remove(path_);
    EXPECT_EQ(validation_message_count(), messages_) << "validation layer messages (see stderr)";
  }
  uint64_t messages_ = 0;
  std::string path_;
};

TEST_F(Report, PlotsEverySeriesOfTheRun) {
  ui::RunHistory h = synthetic_run();
  ui::ReportOptions opt;
  opt.path = path_;
  ui::PlotProbe probe = ui::render_report(h, opt);

  const ui::SeriesProbe* smooth = probe.find("loss", "smoothed");
  ASSERT_NE(smooth, nullptr);
  EXPECT_EQ(smooth->points, 300u);  // the smoothed loss skips no step
  const ui::SeriesProbe* raw = probe.find("loss", "raw");
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(raw->points, 298u);  // the two skipped steps' inf losses are gaps
  const ui::SeriesProbe* scale = probe.find("loss_scale", "scale");
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(scale->points, 300u);
  EXPECT_EQ(scale->min, 16384.0);
  EXPECT_EQ(scale->max, 65536.0);
  const ui::SeriesProbe* skipped = probe.find("loss_scale", "skipped steps");
  ASSERT_NE(skipped, nullptr);
  EXPECT_EQ(skipped->points, 2u);
  EXPECT_EQ(skipped->min, 100.0);
  EXPECT_EQ(skipped->max, 200.0);
  const ui::SeriesProbe* growths = probe.find("loss_scale", "growths");
  ASSERT_NE(growths, nullptr);
  EXPECT_EQ(growths->points, 1u);
  const ui::SeriesProbe* bins = probe.find("histogram", "bins");
  ASSERT_NE(bins, nullptr);
  EXPECT_EQ(bins->points, size_t(train::kHistLogBins));  // the exponent bins; zero, inf and NaN are their own
  const ui::SeriesProbe* zeros = probe.find("histogram", "zeros");
  ASSERT_NE(zeros, nullptr);
  EXPECT_EQ(zeros->points, 1u);
  double elements = 0;
  for (uint32_t c : h.histograms[0].bins) elements += c;
  EXPECT_NEAR(zeros->max, 100.0 * 500 / elements, 1e-3);  // bar heights are % of the tensor's elements
  const ui::SeriesProbe* acc = probe.find("eval", "test accuracy");
  ASSERT_NE(acc, nullptr);
  EXPECT_EQ(acc->points, 2u);
  EXPECT_NEAR(acc->max, 86.0, 1e-4);
  for (const char* panel : {"grad_norm", "step_time"}) {
    bool found = false;
    for (auto& s : probe.series) found |= s.panel == panel && s.points > 200;
    EXPECT_TRUE(found) << panel;
  }

  Picture pic = Picture::load(path_);
  ASSERT_FALSE(pic.empty()) << "no PNG at " << path_;
  EXPECT_EQ(pic.width, 1600);
  EXPECT_EQ(pic.height, 1000);
  auto in = [&](const ui::SeriesProbe* s, uint8_t r, uint8_t g, uint8_t b) {
    return pic.count_near(s->x0, s->y0, s->x1, s->y1, r, g, b);
  };
  // The colours are dashboard.cpp's: smoothed loss, scale line, skipped
  // markers, histogram bars, the shaded fp16 normal range.
  EXPECT_GT(in(smooth, 120, 190, 255), 300u);
  EXPECT_GT(in(scale, 250, 200, 80), 300u);
  EXPECT_GT(in(scale, 240, 70, 70), 20u);
  EXPECT_GT(in(bins, 210, 210, 230), 500u);
  EXPECT_GT(pic.distinct_colours(bins->x0, bins->y0, bins->x1, bins->y1), 6u);
}

TEST_F(Report, AnEmptyRunStillDrawsTheFrame) {
  ui::RunHistory h;
  h.title = "nothing yet";
  ui::ReportOptions opt;
  opt.path = path_;
  opt.width = 800;
  opt.height = 600;
  ui::PlotProbe probe = ui::render_report(h, opt);
  const ui::SeriesProbe* smooth = probe.find("loss", "smoothed");
  ASSERT_NE(smooth, nullptr);
  EXPECT_EQ(smooth->points, 0u);
  Picture pic = Picture::load(path_);
  ASSERT_FALSE(pic.empty());
  EXPECT_EQ(pic.width, 800);
  // Frames, grids and tick labels, but no line colour.
  EXPECT_GT(pic.distinct_colours(0, 0, 800, 600), 4u);
  EXPECT_EQ(pic.count_near(smooth->x0, smooth->y0, smooth->x1, smooth->y1, 120, 190, 255, 10), 0u);
}

// A regression's evaluations are mean squared errors: the panel names the
// metric ("test mse") and plots the values as they are, not as a percentage.
TEST_F(Report, ARegressionPanelIsTitledByItsMetric) {
  ui::RunHistory h = synthetic_run();
  h.evals = {{150, 3772.78, 1, "mse"}, {300, 1200.5, 2, "mse"}};
  EXPECT_EQ(ui::eval_label(h), "test mse");
  ui::ReportOptions opt;
  opt.path = path_;
  ui::PlotProbe probe = ui::render_report(h, opt);
  EXPECT_EQ(probe.find("eval", "test accuracy"), nullptr);
  const ui::SeriesProbe* mse = probe.find("eval", "test mse");
  ASSERT_NE(mse, nullptr);
  EXPECT_EQ(mse->points, 2u);
  EXPECT_NEAR(mse->max, 3772.78, 0.01) << "the MSE itself, not x100";
}

TEST(EvalLabel, ANameGivenWinsOverTheMetrics) {
  ui::RunHistory h;
  EXPECT_EQ(ui::eval_label(h), "test accuracy") << "no evaluation yet";
  h.evals = {{10, 2.5, 0, "loss"}};
  EXPECT_EQ(ui::eval_label(h), "test loss");
  h.eval_name = "val loss";
  EXPECT_EQ(ui::eval_label(h), "val loss");
}

TEST_F(Report, AnUnwritablePathIsAnError) {
  ui::ReportOptions opt;
  opt.path = "/nonexistent-dir/x.png";
  EXPECT_THROW(ui::render_report(synthetic_run(), opt), Error);
}

}  // namespace
}  // namespace vkamp::test

namespace vkamp::test {
namespace {

// The app's "export metrics" writes what --metrics writes: the step records,
// and each epoch's evaluation right after the step that ended the epoch.
TEST(RunHistoryExport, EvalRecordsFollowTheStepThatEndedTheirEpoch) {
  ui::RunHistory h;
  for (uint32_t s = 0; s < 4; ++s) {
    train::StepMetrics m;
    m.step = s;
    m.loss = 1.0f / float(s + 1);
    m.loss_scale = 65536;
    m.applied = s + 1;
    h.add(m);
  }
  h.evals.push_back({2, 0.5, 1, "accuracy"});  // after 2 steps: epoch 1 ended at step 1
  h.evals.push_back({4, 0.75, 2, "accuracy"});
  const std::string path = ::testing::TempDir() + "vkamp-export-" + std::to_string(getpid()) + ".jsonl";
  h.export_jsonl(path);
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::filesystem::remove(path);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_NE(lines[1].find("\"step\": 1"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[2], "{\"type\": \"eval\", \"epoch\": 1, \"step\": 2, \"accuracy\": 0.5}");
  EXPECT_NE(lines[4].find("\"step\": 3"), std::string::npos) << lines[4];
  EXPECT_EQ(lines[5], "{\"type\": \"eval\", \"epoch\": 2, \"step\": 4, \"accuracy\": 0.75}");
}

}  // namespace
}  // namespace vkamp::test
