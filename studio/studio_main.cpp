// vkamp-studio: trains a sample on a worker thread and draws the dashboard
// live in a window, with controls. See studio_options.cpp for the flags.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>
#include <nlohmann/json.hpp>

#include "app/finetune_job.hpp"
#include "app/run_history.hpp"
#include "app/workloads.hpp"
#include "dashboard/dashboard.hpp"
#include "dashboard/offscreen_target.hpp"
#include "studio_controls.hpp"
#include "studio_options.hpp"
#include "studio_window.hpp"
#include "training_session.hpp"
#include "vkamp/error.hpp"
#include "vkamp/io/metrics_log.hpp"
#include "vkamp/platform.hpp"

using namespace vkamp;
using namespace vkamp::ui;

namespace {

// The test hook: every series the last frame drew, with its point count
// and range (null where inf or NaN), and where its plot sits in the picture.
// One JSON object (nlohmann-json: titles and status messages escaped).
void write_probe(const std::string& path, const PlotProbe& probe, const app::RunHistory& h) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["title"] = h.title;
  j["status"] = h.status;
  j["records"] = h.records();
  j["skipped"] = h.skipped_steps.size();
  j["histograms"] = h.histograms.size();
  j["evals"] = h.evals.size();
  j["generated_text"] = h.generated_text;
  j["training_sample"] = h.training_sample;
  j["histogram_tensors"] = Json::array();
  for (const auto& t : h.histograms) j["histogram_tensors"].push_back(t.tensor);
  // The BatchNorm panel's rows (absent without BatchNorm).
  if (!h.bn_layers.empty()) {
    j["bn_step"] = h.bn_step;
    j["bn_layers"] = Json::array();
    for (const app::BnLayerStats& l : h.bn_layers)
      j["bn_layers"].push_back({{"layer", l.layer},
                                {"channels", l.channels},
                                {"running_mean", {l.running_mean.min, l.running_mean.mean, l.running_mean.max}},
                                {"running_var", {l.running_var.min, l.running_var.mean, l.running_var.max}},
                                {"batches", l.batches}});
  }
  j["series"] = Json::array();
  for (const SeriesProbe& s : probe.series) {
    Json one;
    one["panel"] = s.panel;
    one["series"] = s.series;
    one["points"] = s.points;
    one["min"] = double(s.min);  // nlohmann writes inf and NaN as null
    one["max"] = double(s.max);
    one["rect"] = {s.x0, s.y0, s.x1, s.y1};
    j["series"].push_back(std::move(one));
  }
  std::ofstream out(vkamp::platform::path_from_utf8(path), std::ios::binary);
  if (!out) throw Error("cannot write " + path);
  out << j.dump(1, ' ', false, Json::error_handler_t::replace) << "\n";
}

// How long an idle frame waits for input, and the frame rate while training.
constexpr double kIdleWait = 0.25;
constexpr double kMaxFps = 60;

struct ReportDraw {
  const app::RunHistory* h;
  DashboardState state;
};

}  // namespace

int main(int argc, char** argv) {
  vkamp::platform::utf8_arguments(argc, argv);
  // Flags first: --help, --version and a bad flag end here, before any window opens.
  StudioOptions opt;
  if (int status = parse_studio_options(argc, argv, opt); status >= 0) return status;

  std::unique_ptr<StudioWindow> window;
  try {
    window = std::make_unique<StudioWindow>(opt.width, opt.height, opt.cfg.device);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vkamp-studio: %s\n", e.what());
    return 1;
  }

  app::SharedHistory shared;
  app::RunHistory history;
  DashboardState dash;
  PlotProbe probe;
  StudioControls controls;
  controls.jobs = app::workloads();
  if (!opt.cfg.data.train_path.empty()) controls.jobs.push_back(app::user_data_workload(opt.cfg));
  if (opt.sample == "vkamp-finetune") controls.jobs.push_back(app::finetune_workload(opt.cfg));
  const auto& jobs = controls.jobs;
  for (int i = 0; i < int(jobs.size()); ++i)
    if (jobs[i].name == opt.sample) controls.sample = i;
  controls.cfg = opt.cfg;
  controls.running = opt.cfg;
  controls.knobs = opt.cfg.scaler;
  int status = 0;
  {
    TrainingSession session(shared);
    session.start(jobs[controls.sample], opt.cfg, opt.paused);

    auto t0 = std::chrono::steady_clock::now();
    uint64_t steps_at_start = 0;
    uint32_t frame = 0;
    try {
      uint32_t counted = 0;  // frames since --until-step was reached
      uint32_t idle_frames = 0;  // frames that first waited for input
      size_t drawn_records = ~size_t(0);
      std::string drawn_status;
      auto frame_start = std::chrono::steady_clock::now();
      while (!window->should_close() && (opt.frames == 0 || counted < opt.frames)) {
        // Idle (no run going and nothing new drawn last frame): wait for
        // input, up to kIdleWait, rather than redraw flat out. Training: at
        // most kMaxFps frames a second, so drawing leaves the cores to it.
        const bool changed = history.records() != drawn_records || history.status != drawn_status;
        drawn_records = history.records();
        drawn_status = history.status;
        double wait = 0;
        if (session.state() != SessionState::Running && !changed && frame > 2) {
          wait = kIdleWait;
          ++idle_frames;
        } else {
          const auto next = frame_start + std::chrono::duration<double>(1.0 / kMaxFps);
          std::this_thread::sleep_until(next);
        }
        frame_start = std::chrono::steady_clock::now();
        window->begin_frame(wait);
        shared.pull(history);
        if (frame == 0) steps_at_start = history.records();
        draw_dashboard(history, dash, &probe, [&] { draw_controls(controls, session, history); });
        window->end_frame();
        ++frame;
        SessionState s = session.state();
        bool ended = s == SessionState::Finished || s == SessionState::Failed;
        if (history.records() >= opt.until_step || (ended && frame > 1)) ++counted;
      }
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr,
                   "vkamp-studio: %u frames in %.1f s (%.1f frames/s) on %s while %llu steps trained; %u idle "
                   "frames waited for input\n",
                   frame, seconds, frame / std::max(seconds, 1e-9), window->device_name().c_str(),
                   (unsigned long long)(history.records() - steps_at_start), idle_frames);
      if (!opt.screenshot.empty()) {
        uint32_t w = 0, h = 0;
        auto pixels = window->capture(w, h);
        write_png(opt.screenshot, w, h, pixels);
        std::fprintf(stderr, "vkamp-studio: screenshot written to %s\n", opt.screenshot.c_str());
      }
      if (!opt.probe.empty()) write_probe(opt.probe, probe, history);
      if (!opt.cfg.report_path.empty()) {
        ReportDraw rd{&history, {}};
        auto pixels = window->render_offscreen(1600, 1000, [](void* u) {
          auto* r = static_cast<ReportDraw*>(u);
          draw_dashboard(*r->h, r->state, nullptr);
        }, &rd);
        write_png(opt.cfg.report_path, 1600, 1000, pixels);
        std::fprintf(stderr, "vkamp-studio: dashboard picture written to %s\n", opt.cfg.report_path.c_str());
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "vkamp-studio: %s\n", e.what());
      status = 1;
    }
    // As a sample would exit: 2 for a run refused (bad data, a flag that
    // cannot apply), 1 for one that failed while training.
    if (status == 0) status = session.exit_status();
  }  // the session stops its run before the window goes
  window.reset();
  return status;
}
