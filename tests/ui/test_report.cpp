// The offscreen dashboard (--report): a synthetic run drawn without any
// window or X server, with the validation layer on. The picture must hold
// the data: the plotted series have the run's points and ranges, and the
// plot areas show the line, marker, bar and band colours.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "dashboard.hpp"
#include "picture.hpp"
#include "report.hpp"
#include "app/run_history.hpp"
#include "vkamp/error.hpp"
#include "vkamp/instance.hpp"
#include "vkamp/train/gpu_state.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::test {
namespace {

namespace fs = std::filesystem;

// 300 steps: the loss decays, the scale backs off at two injected
// overflows (skipped) and grows once; two tensors' histograms; two evals.
// Underflow: of 1024 gradient elements (fc1.weight 1000, fc1.bias 24), 10
// + s / 10 are saved by the scale at step s, and the largest |g| is 2^-4 S;
// per tensor every 10 steps, fc1.bias losing 12 of its 24.
app::RunHistory synthetic_run() {
  app::RunHistory h;
  h.title = "synthetic";
  h.samples_per_step = 64;
  h.budget = 298;
  h.histogram_interval = 10;
  h.gradients.precision = Format::F16;
  h.gradients.tensors = {"fc1.weight", "fc1.bias"};
  h.gradients.elements = {1000, 24};
  h.gradients.total = 1024;
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
    m.lost_unscaled = 10 + s / 10;
    m.subnormal = 5;
    m.zeros = 100;
    m.max_abs_grad = scale / 16;
    h.add(m);
    if (s % 10 == 0) {
      train::TensorUnderflow u;
      u.step = s;
      u.loss_scale = scale;
      u.stats = {train::TensorStats{100, 5, s / 10, 0, std::bit_cast<uint32_t>(scale / 16)},
                 train::TensorStats{0, 0, 12, 0, std::bit_cast<uint32_t>(scale / 64)}};
      h.add(u);
    }
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
    vkamp::platform::set_env("VKAMP_VALIDATION", "1");
    vkamp::platform::set_env("DISPLAY", nullptr);  // nothing here may need an X server
    messages_ = validation_message_count();
    path_ = (fs::temp_directory_path() / ("vkamp-report-" + std::to_string(vkamp::platform::process_id()) + ".png")).string();
  }
  void TearDown() override {
    fs::remove(path_);
    EXPECT_EQ(validation_message_count(), messages_) << "validation layer messages (see stderr)";
  }
  uint64_t messages_ = 0;
  std::string path_;
};

TEST_F(Report, PlotsEverySeriesOfTheRun) {
  app::RunHistory h = synthetic_run();
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

// The underflow panel sits under the loss scale on the same step axis: the
// share of the gradient the scale saves and the subnormal share in % of
// the elements, and the headroom in doublings, with the tensor picked in
// the histogram table (the first, fc1.weight) drawn at its histogram steps.
TEST_F(Report, PlotsUnderflowAndHeadroomUnderTheScale) {
  app::RunHistory h = synthetic_run();
  ui::ReportOptions opt;
  opt.path = path_;
  ui::PlotProbe probe = ui::render_report(h, opt);
  const ui::SeriesProbe* lost = probe.find("underflow", "lost unscaled");
  const ui::SeriesProbe* subnormal = probe.find("underflow", "subnormal");
  const ui::SeriesProbe* headroom = probe.find("headroom", "headroom");
  const ui::SeriesProbe* scale = probe.find("loss_scale", "scale");
  ASSERT_TRUE(lost && subnormal && headroom && scale) << "an underflow series is missing";
  EXPECT_EQ(lost->points, 300u);
  EXPECT_NEAR(lost->min, 100.0 * 10 / 1024, 1e-4);
  EXPECT_NEAR(lost->max, 100.0 * 39 / 1024, 1e-4);
  EXPECT_NEAR(subnormal->max, 100.0 * 5 / 1024, 1e-4);
  // The stored 2^-4 S against fp16's 65504 (just under 2^16): 3 doublings
  // at S = 2^16, 5 at 2^14.
  EXPECT_EQ(headroom->points, 300u);
  EXPECT_EQ(headroom->min, 3.0);
  EXPECT_EQ(headroom->max, 5.0);
  const ui::SeriesProbe* tensor = probe.find("underflow", "fc1.weight lost unscaled");
  ASSERT_NE(tensor, nullptr);
  EXPECT_EQ(tensor->points, 30u) << "every 10 steps";
  EXPECT_NEAR(tensor->max, 100.0 * 29 / 1000, 1e-4);
  EXPECT_NE(probe.find("headroom", "fc1.weight headroom"), nullptr);
  // Under the scale panel, on its step axis.
  EXPECT_EQ(lost->x0, scale->x0);
  EXPECT_EQ(lost->x1, scale->x1);
  EXPECT_GT(lost->y0, scale->y1);
  EXPECT_GT(headroom->y0, lost->y1);

  Picture pic = Picture::load(path_);
  ASSERT_FALSE(pic.empty());
  auto in = [&](const ui::SeriesProbe* s, uint8_t r, uint8_t g, uint8_t b) {
    return pic.count_near(s->x0, s->y0, s->x1, s->y1, r, g, b, 16);
  };
  EXPECT_GT(in(lost, 255, 120, 100), 300u) << "no lost-unscaled line";
  EXPECT_GT(in(subnormal, 230, 160, 40), 300u) << "no subnormal line";
  EXPECT_GT(in(headroom, 150, 230, 110), 300u) << "no headroom line";
}

// A history without an UnderflowScope (a library user's) plots no underflow.
TEST_F(Report, WithoutAScopeTheUnderflowPanelIsEmpty) {
  app::RunHistory h;
  train::StepMetrics m;
  m.lost_unscaled = 5;
  h.add(m);
  EXPECT_TRUE(h.underflow.step.empty());
  ui::ReportOptions opt;
  opt.path = path_;
  ui::PlotProbe probe = ui::render_report(h, opt);
  const ui::SeriesProbe* lost = probe.find("underflow", "lost unscaled");
  ASSERT_NE(lost, nullptr);
  EXPECT_EQ(lost->points, 0u);
}

TEST_F(Report, AnEmptyRunStillDrawsTheFrame) {
  app::RunHistory h;
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
  app::RunHistory h = synthetic_run();
  h.evals = {{150, 3772.78, 1, "mse"}, {300, 1200.5, 2, "mse"}};
  EXPECT_EQ(app::eval_label(h), "test mse");
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
  app::RunHistory h;
  EXPECT_EQ(app::eval_label(h), "test accuracy") << "no evaluation yet";
  h.evals = {{10, 2.5, 0, "loss"}};
  EXPECT_EQ(app::eval_label(h), "test loss");
  h.eval_name = "val loss";
  EXPECT_EQ(app::eval_label(h), "val loss");
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
  app::RunHistory h;
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
  const std::string path = ::testing::TempDir() + "vkamp-export-" + std::to_string(vkamp::platform::process_id()) + ".jsonl";
  h.export_jsonl(path);
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  in.close();  // Windows removes no file that is open
  std::filesystem::remove(path);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_NE(lines[1].find("\"step\": 1"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[2], "{\"type\": \"eval\", \"epoch\": 1, \"step\": 2, \"accuracy\": 0.5}");
  EXPECT_NE(lines[4].find("\"step\": 3"), std::string::npos) << lines[4];
  EXPECT_EQ(lines[5], "{\"type\": \"eval\", \"epoch\": 2, \"step\": 4, \"accuracy\": 0.75}");
}

// With the run's scope the export carries the underflow as --metrics does:
// the step's fractions, then each tensor's record at its step.
TEST(RunHistoryExport, UnderflowRecordsFollowTheirStep) {
  app::RunHistory h;
  h.gradients.precision = Format::F16;
  h.gradients.tensors = {"w", "b"};
  h.gradients.elements = {6, 2};
  h.gradients.total = 8;
  for (uint32_t s = 0; s < 2; ++s) {
    train::StepMetrics m;
    m.step = s;
    m.zeros = 2;
    m.lost_unscaled = 1;
    m.max_abs_grad = 1;
    h.add(m);
    train::TensorUnderflow u;
    u.step = s;
    u.stats = {train::TensorStats{1, 0, 1, 0, std::bit_cast<uint32_t>(1.0f)}, train::TensorStats{1, 0, 0, 0, 0}};
    h.add(u);
  }
  const std::string path = ::testing::TempDir() + "vkamp-export-underflow-" + std::to_string(vkamp::platform::process_id()) + ".jsonl";
  h.export_jsonl(path);
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  in.close();  // Windows removes no file that is open
  std::filesystem::remove(path);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_NE(lines[0].find("\"zeros\": 0.25, \"subnormal\": 0, \"lost_unscaled\": 0.125, \"headroom\": 15}"),
            std::string::npos)
      << lines[0];
  EXPECT_EQ(lines[1].rfind("{\"type\": \"underflow\", \"step\": 0, \"tensor\": \"w\"", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("{\"type\": \"underflow\", \"step\": 0, \"tensor\": \"b\"", 0), 0u) << lines[2];
  EXPECT_NE(lines[3].find("\"step\": 1, "), std::string::npos) << lines[3];
}

}  // namespace
}  // namespace vkamp::test
