#include "app/run_loop.hpp"

#include <chrono>
#include <cstdio>
#include <utility>

#include "app/first_step_note.hpp"
#include "app/progress_bar.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/io/metrics_log.hpp"
#include "vkamp/train/scale_suggestion.hpp"
#include "vkamp/train/underflow_scope.hpp"

namespace vkamp::app {

std::string sampled_text(const train::Trainer& trainer) {
  const uint64_t rows = trainer.held_out_rows(), given = trainer.held_out_rows_given();
  if (rows == 0 || rows >= given) return "";
  const uint64_t batch = trainer.config().batch;
  return " on " + std::to_string((rows + batch - 1) / batch) + " of " + std::to_string((given + batch - 1) / batch) +
         " batches";
}

// What the loop keeps between steps, made at start().
struct RunLoop::State {
  State(const RunOptions& cfg, const std::string& label, train::Trainer& trainer)
      : bar(label, trainer.budget(), cfg.progress && !cfg.quiet),
        watch(trainer.epochs(), cfg.eval_every != 0,
              StopRule{cfg.early_stop_monitor, cfg.early_stop, cfg.early_stop_min_delta},
              sampled_text(trainer)) {}
  std::unique_ptr<io::MetricsLog> log;
  ProgressBar bar;
  EpochWatch watch;
  train::ScaleSuggester suggester;
  // A long evaluation (charlm's) shows a bar of its own, on a terminal
  // only, once it has taken half a second (a short one would flicker).
  std::optional<ProgressBar> eval_bar;
  std::optional<std::chrono::steady_clock::time_point> eval_start;
};

RunLoop::RunLoop(train::Trainer& trainer, const RunOptions& cfg, std::string label, RunHooks hooks)
    : trainer_(trainer), cfg_(cfg), hooks_(std::move(hooks)), label_(std::move(label)) {}

RunLoop::~RunLoop() { unhook(); }

void RunLoop::unhook() {
  trainer_.on_step = nullptr;
  trainer_.on_histogram = nullptr;
  trainer_.on_tensor_underflow = nullptr;
  trainer_.on_epoch_end = nullptr;
  trainer_.on_eval_progress = nullptr;
}

void RunLoop::start() {
  if (cfg_.early_stop || cfg_.save_best) {
    const std::string flag = cfg_.early_stop ? "--early-stop" : "--save-best";
    if (!trainer_.has_held_out())
      throw vkamp::ConfigError(flag + " watches the held-out metric (" + monitor_name(cfg_.early_stop_monitor) +
                               "), and this run has none (vkamp-train: give --test FILE or --val-split X)");
  }
  if (trainer_.has_held_out()) check_monitor(cfg_.early_stop_monitor, trainer_.held_out_metric());
  st_ = std::make_unique<State>(cfg_, label_, trainer_);
  if (!cfg_.metrics_path.empty())
    st_->log = std::make_unique<io::MetricsLog>(cfg_.metrics_path,
                                                train::underflow_scope(cfg_.precision, trainer_.model().tensors()));
  trainer_.on_step = [this](const train::StepMetrics& m) { on_step(m); };
  const bool suggest = cfg_.scaler.mode == config::LossScaleMode::Suggest;
  trainer_.on_histogram = [this, suggest](const train::TensorHistogram& h) {
    if (suggest) st_->suggester.add(h);
    if (st_->log) st_->log->write(h);
    if (hooks_.histogram) hooks_.histogram(h);
  };
  trainer_.on_tensor_underflow = [this](const train::TensorUnderflow& u) {
    if (!train::per_tensor_step(u.step, cfg_.scaler.histogram_interval)) return;
    if (st_->log) st_->log->write(u);
    if (hooks_.tensor_underflow) hooks_.tensor_underflow(u);
  };
  if (st_->bar.on_terminal())
    trainer_.on_eval_progress = [this](uint64_t done, uint64_t total) {
      const auto now = std::chrono::steady_clock::now();
      if (!st_->eval_start) st_->eval_start = now;
      if (!st_->eval_bar && now - *st_->eval_start < std::chrono::milliseconds(500)) return;
      if (!st_->eval_bar) {
        st_->bar.clear();
        st_->eval_bar.emplace("  evaluating", total);
      }
      st_->eval_bar->update(done, "");
    };
  trainer_.on_epoch_end = [this](const train::EpochEnd& e) { on_epoch_end(e); };
  // On a terminal, the bar says why it sits at 0 until the first step's
  // record comes (first_step_note.hpp); a log keeps its lines as they were.
  if (st_->bar.on_terminal())
    if (const std::string note = first_step_note(trainer_.context()); !note.empty()) st_->bar.update(0, note);
  trainer_.start();
}

void RunLoop::on_step(const train::StepMetrics& m) {
  if (st_->log) st_->log->write(m);
  char status[128];
  std::snprintf(status, sizeof status, "loss %.4g  scale %g%s", m.loss, m.loss_scale, m.skipped ? "  (skipped)" : "");
  st_->bar.update(m.applied, status);
  st_->watch.add(m);
  if (hooks_.step) hooks_.step(m);
}

void RunLoop::on_epoch_end(const train::EpochEnd& e) {
  st_->eval_start.reset();
  if (st_->eval_bar) {
    st_->eval_bar->clear();
    st_->eval_bar.reset();
  }
  if (st_->log) st_->log->write(e);
  const EpochWatch::Verdict v = st_->watch.end(e);
  if (!e.metric.empty()) result_.last_eval = e;
  if (!cfg_.quiet) {
    st_->bar.clear();
    std::printf("%s\n", v.line.c_str());
    std::fflush(stdout);
  }
  // No step is in flight here: the master weights are this evaluation's.
  if (v.improved && cfg_.save_best) {
    result_.best_weights = trainer_.model().read_master();
    result_.best_buffers = trainer_.model().read_buffers();
  }
  if (v.stop && e.applied < trainer_.budget()) {  // not when the budget ends here anyway
    result_.stopped_early_at = st_->watch.where(e);
    trainer_.request_stop();
  }
  if (hooks_.epoch_end) hooks_.epoch_end(e);
}

bool RunLoop::step() { return trainer_.advance(); }

RunResult RunLoop::finish() {
  static_cast<train::TrainSummary&>(result_) = trainer_.finish();
  st_->bar.finish();
  unhook();  // the callbacks hold this loop
  result_.best = st_->watch.best();
  result_.best_value = st_->watch.best_value();
  if (result_.best) result_.best_at = st_->watch.where(*result_.best);
  result_.sampled = sampled_text(trainer_);
  if (cfg_.scaler.mode == config::LossScaleMode::Suggest && !result_.failed) {
    std::printf("%s", train::suggestion_text(st_->suggester.suggest(cfg_.precision, cfg_.scaler), cfg_.precision,
                                             cfg_.scaler.underflow_target)
                          .c_str());
    std::fflush(stdout);
    result_.suggested = true;
  }
  return result_;
}

RunResult RunLoop::run() {
  start();
  while (step()) {
  }
  return finish();
}

train::Trainer::HeldOut final_held_out(train::Trainer& trainer, const RunResult& s, const data::HostData& held_out) {
  if (s.last_eval && s.last_eval->applied == s.applied && s.sampled.empty())
    return {s.last_eval->metric, s.last_eval->value, s.last_eval->loss};
  return trainer.held_out(held_out);
}

}  // namespace vkamp::app
