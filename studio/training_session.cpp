#include "training_session.hpp"

#include "app/charlm.hpp"
#include "app/first_step_note.hpp"
#include "app/model_source.hpp"
#include "app/run_report.hpp"
#include "app/run_weights.hpp"
#include "app/tool_main.hpp"

#include <cstdio>

#include "vkamp/error.hpp"

namespace vkamp::ui {

const char* state_name(SessionState s) {
  switch (s) {
    case SessionState::Idle: return "idle";
    case SessionState::Running: return "training";
    case SessionState::Paused: return "paused";
    case SessionState::Finished: return "finished";
    case SessionState::Failed: return "stopped";
  }
  return "?";
}

TrainingSession::TrainingSession(app::SharedHistory& history) : history_(history), thread_([this] { worker(); }) {}

TrainingSession::~TrainingSession() {
  {
    std::lock_guard lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void TrainingSession::post(std::function<void()> cmd) {
  {
    std::lock_guard lock(mu_);
    commands_.push_back(std::move(cmd));
  }
  cv_.notify_all();
}

SessionState TrainingSession::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

std::string TrainingSession::message() const {
  std::lock_guard lock(mu_);
  return message_;
}

uint64_t TrainingSession::steps_done() const { return steps_done_.load(); }

void TrainingSession::set(SessionState s, const std::string& msg) {
  {
    std::lock_guard lock(mu_);
    state_ = s;
    if (!msg.empty()) message_ = msg;
  }
  std::string status = state_name(s);
  if (!msg.empty()) status += s == SessionState::Failed ? ": " + msg : " (" + msg + ")";
  history_.set_status(s == SessionState::Failed ? "error: " + msg : status);
}

void TrainingSession::start(const app::Workload& job, const app::RunOptions& cfg, bool paused) {
  post([this, job, cfg, paused] {
    loop_.reset();
    trainer_.reset();
    exit_status_ = 0;
    set(SessionState::Idle, "loading " + job.name);
    // charlm's --generate-only samples a saved model, and --dry-run only
    // sets a run up: neither trains, so there is no run to show.
    if (cfg.lm.generate_only)
      throw vkamp::ConfigError("--generate-only samples a saved GPT without training, which the studio cannot show: "
                               "run vkamp-generate --weights FILE (or charlm --generate-only) instead");
    if (cfg.dry_run)
      throw vkamp::ConfigError("--dry-run prints a run's device memory without training, which the studio cannot "
                               "show: run the job's program (charlm, a sample, vkamp-train) with --dry-run instead");
    if (!ctx_ || ctx_device_ != cfg.device) {
      ctx_.reset();
      ContextOptions opt;
      opt.device = cfg.device;
      ctx_ = std::make_unique<Context>(opt);
      ctx_device_ = cfg.device;
      ctx_compiled_ = false;
    }
    data_ = job.load(cfg);
    if (job.language_model) app::prompt_ids(data_.vocab, cfg.lm);  // a bad --prompt fails now, not after training
    job_ = job;
    cfg_ = cfg;
    app::RunOptions run = cfg;
    run.live_fault_injection = true;  // the studio's "inject overflow" button
    trainer_ = app::make_trainer(*ctx_, run, app::job_model(job, cfg, data_), job.loss, data_.train);
    if (job.prepare) job.prepare(cfg, *trainer_);
    app::init_weights_from_file(cfg, *trainer_);
    trainer_->set_held_out(data_.test);  // evaluated every epoch or --eval-every, over --eval-iters batches
    app::RunHistory blank;
    char title[256];
    std::snprintf(title, sizeof title, "%s · %s, %s loss scaling · %s", job.name.c_str(), format_name(cfg.precision),
                  cfg.scaler.mode == config::LossScaleMode::None ? "no" : config::scale_mode_name(cfg.scaler.mode),
                  ctx_->info().name.c_str());
    blank.title = title;
    blank.eval_name = !job.eval_name.empty()                     ? job.eval_name
                      : job.language_model                       ? "val loss"
                      : job.loss == train::LossKind::SoftmaxXent ? "test accuracy"
                                                                 : "";
    blank.samples_per_step = cfg.batch * cfg.grad_accum;
    blank.budget = trainer_->budget();
    blank.histogram_interval = cfg.scaler.histogram_interval;
    blank.precision = cfg.precision;
    blank.gradients = train::underflow_scope(cfg.precision, trainer_->model().tensors());
    blank.training_sample = data_.sample;
    history_.reset(blank);
    steps_done_ = 0;
    // The run loop's events feed the panels.
    app::RunHooks hooks;
    hooks.step = [this](const train::StepMetrics& m) {
      if (!first_step_note_.empty()) {  // the first step has run: its pipelines are compiled
        first_step_note_.clear();
        history_.set_status(state_name(state()));
      }
      history_.add(m);
      steps_done_.fetch_add(1);
    };
    // Only a model with BatchNorm buffers pays the extra sync at histogram steps.
    hooks.histogram = [this, bn = !trainer_->model().buffers().empty()](const train::TensorHistogram& h) {
      history_.add(h);
      bn_due_ = bn;
    };
    hooks.tensor_underflow = [this](const train::TensorUnderflow& u) { history_.add(u); };
    hooks.epoch_end = [this](const train::EpochEnd& e) {
      if (e.metric.empty()) return;
      history_.add_eval({e.step, e.value, e.epoch, e.metric});
      read_bn_layers();  // the trainer has synced for the evaluation
    };
    loop_ = std::make_unique<app::RunLoop>(*trainer_, cfg, job.name, std::move(hooks));
    loop_->start();
    pending_steps_ = 0;
    bn_due_ = false;
    read_bn_layers();  // their initial values (0 and 1), so the panel is there from the start
    {
      std::lock_guard lock(mu_);
      message_ = job.name + ": " + std::to_string(trainer_->budget()) + " updates on " + ctx_->info().name;
    }
    set(paused ? SessionState::Paused : SessionState::Running);
    // The first step of the first run on this context compiles the
    // pipelines, for tens of seconds with a cold cache on a CPU driver:
    // the status says so until that step's record comes (first_step_note.hpp).
    first_step_note_ = paused || ctx_compiled_ ? "" : app::first_step_note(*ctx_);
    ctx_compiled_ = true;
    if (!first_step_note_.empty())
      history_.set_status(std::string(state_name(SessionState::Running)) + ": " + first_step_note_);
  });
}

void TrainingSession::pause(bool paused) {
  post([this, paused] {
    if (!trainer_) return;
    SessionState s = state();
    if (paused && s == SessionState::Running) {
      trainer_->sync();  // show every step that ran
      read_bn_layers();
      set(SessionState::Paused);
    } else if (!paused && s == SessionState::Paused) {
      set(SessionState::Running);
    }
  });
}

void TrainingSession::step_once() {
  post([this] {
    if (trainer_ && state() == SessionState::Paused) ++pending_steps_;
  });
}

void TrainingSession::inject_overflow() {
  post([this] {
    if (!trainer_) return;
    trainer_->inject_overflow_next();
    std::lock_guard lock(mu_);
    message_ = "an inf goes into a gradient at the next step";
  });
}

void TrainingSession::set_scaler(const config::ScalerConfig& sc) {
  post([this, sc] {
    if (!trainer_) return;
    try {
      trainer_->set_scaler(sc);
      std::lock_guard lock(mu_);
      message_ = "new loss-scaling knobs applied";
    } catch (const vkamp::ConfigError& e) {
      std::lock_guard lock(mu_);
      message_ = e.what();  // the run goes on with the old knobs
    }
  });
}

void TrainingSession::save_checkpoint(const std::string& path) {
  post([this, path] {
    if (!trainer_) return;
    trainer_->save_checkpoint(path);
    std::lock_guard lock(mu_);
    message_ = "checkpoint saved to " + path;
  });
}

// The run's end, as a sample ends it: the summary on stdout, the final
// held-out value over the whole set, a language model's text, --save.
void TrainingSession::end_run() {
  const app::RunResult r = loop_->finish();
  loop_.reset();
  read_bn_layers();  // the final statistics, which a checkpoint or export keeps
  if (r.failed) {
    exit_status_ = app::report_failure("vkamp-studio", cfg_, r);
    set(SessionState::Failed, r.failure);
    return;
  }
  if (r.suggested) {  // --loss-scale suggest: the suggestion is the result
    set(SessionState::Finished, "the loss-scale suggestion is on stdout");
    return;
  }
  double last_value = 0;
  if (data_.test.count) {
    // The trained weights over the whole set, unless the last evaluation
    // was of them and read all of it.
    const train::Trainer::HeldOut h = app::final_held_out(*trainer_, r, data_.test);
    if (!r.last_eval || r.last_eval->applied != r.applied || !r.sampled.empty())
      history_.add_eval({r.steps, h.value, 0, h.metric});
    last_value = h.value;
    std::printf("%s: %s of the trained weights\n", job_.name.c_str(), app::held_out_text(h.metric, h.value).c_str());
  }
  app::print_run_report(cfg_, *trainer_, r);
  if (job_.finish) std::fputs(job_.finish(cfg_, *trainer_, r).c_str(), stdout);
  const models::GptConfig gpt =
      job_.language_model ? app::gpt_config(cfg_.lm, uint32_t(data_.vocab.size())) : models::GptConfig{};
  if (job_.language_model && cfg_.lm.generate)
    history_.set_generated_text(app::generate_text(*trainer_, gpt, data_.vocab, cfg_.lm, cfg_.seed));
  if (!cfg_.save_path.empty())
    app::save_weights(cfg_, *trainer_, r,
                      job_.language_model
                          ? app::charlm_save_metadata(*trainer_, gpt, data_.vocab, data_.test, cfg_, r, last_value)
                          : data_.metadata);
  std::fflush(stdout);
  set(SessionState::Finished);  // the trainer stays, for a checkpoint
}

// BatchNorm's running statistics on the host. Only where the trainer has
// synced (a pause, an evaluation, after a histogram step, the end), never
// every step: the read must not race the update pass that writes them.
void TrainingSession::read_bn_layers() {
  const train::Model& model = trainer_->model();
  if (model.buffers().empty()) return;
  history_.set_bn_layers(uint32_t(steps_done_.load()), app::bn_layer_stats(model.buffer_tensors(), model.read_buffers()));
}

void TrainingSession::run_command_safely(const std::function<void()>& cmd) {
  try {
    cmd();
  } catch (const std::exception& e) {
    loop_.reset();
    trainer_.reset();
    std::fprintf(stderr, "vkamp-studio: %s\n", e.what());
    exit_status_ = app::exit_status(e);
    set(SessionState::Failed, e.what());
  }
}

void TrainingSession::worker() {
  for (;;) {
    std::function<void()> cmd;
    {
      std::unique_lock lock(mu_);
      // Sleep unless there is a command or a step to run.
      cv_.wait(lock, [&] {
        return quit_ || !commands_.empty() ||
               (loop_ && (state_ == SessionState::Running || (state_ == SessionState::Paused && pending_steps_)));
      });
      if (quit_) break;
      if (!commands_.empty()) {
        cmd = std::move(commands_.front());
        commands_.pop_front();
      }
    }
    if (cmd) {
      run_command_safely(cmd);
      continue;
    }
    run_command_safely([&] {
      bool single = state() == SessionState::Paused;
      bool more = loop_->step();
      if (single) {
        --pending_steps_;
        trainer_->sync();
      }
      // At the histogram steps' cadence: one wait per histogram interval.
      if (bn_due_ || single) {
        if (!single) trainer_->sync();  // bn_due_: only with BatchNorm buffers
        bn_due_ = false;  // after the sync, which may read more histogram steps
        read_bn_layers();
      }
      if (!more) end_run();
    });
  }
  loop_.reset();
  trainer_.reset();
  ctx_.reset();
}

}  // namespace vkamp::ui
