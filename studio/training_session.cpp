#include "training_session.hpp"

#include "app/charlm.hpp"
#include "app/model_source.hpp"

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

TrainingSession::TrainingSession(SharedHistory& history) : history_(history), thread_([this] { worker(); }) {}

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
    trainer_.reset();
    set(SessionState::Idle, "loading " + job.name);
    if (!ctx_ || ctx_device_ != cfg.device) {
      ctx_.reset();
      ContextOptions opt;
      opt.device = cfg.device;
      ctx_ = std::make_unique<Context>(opt);
      ctx_device_ = cfg.device;
    }
    data_ = job.load(cfg);
    job_ = job;
    cfg_ = cfg;
    app::RunOptions run = cfg;
    run.live_fault_injection = true;  // the studio's "inject overflow" button
    trainer_ = app::make_trainer(*ctx_, run, app::job_model(job, cfg, data_), job.loss, data_.train);
    RunHistory blank;
    char title[256];
    std::snprintf(title, sizeof title, "%s · %s, %s loss scaling · %s", job.name.c_str(), format_name(cfg.precision),
                  cfg.scaler.mode == config::LossScaleMode::None ? "no" : config::scale_mode_name(cfg.scaler.mode),
                  ctx_->info().name.c_str());
    blank.title = title;
    blank.eval_name = job.language_model                         ? "val loss"
                      : job.loss == train::LossKind::SoftmaxXent ? "test accuracy"
                                                                 : "";
    blank.samples_per_step = cfg.batch * cfg.grad_accum;
    blank.budget = trainer_->budget();
    blank.histogram_interval = cfg.scaler.histogram_interval;
    blank.precision = cfg.precision;
    blank.gradients = train::underflow_scope(cfg.precision, trainer_->model().tensors());
    history_.reset(blank);
    steps_done_ = 0;
    last_applied_ = 0;
    evaluated_at_ = UINT32_MAX;
    // Per epoch, or every --eval-every steps (a language model's epoch is
    // every offset of its text).
    steps_per_eval_ = cfg.eval_every ? cfg.eval_every : trainer_->steps_per_epoch() / cfg.grad_accum;
    next_eval_ = steps_per_eval_;
    trainer_->on_step = [this](const train::StepMetrics& m) {
      history_.add(m);
      steps_done_.fetch_add(1);
      last_applied_ = m.applied;
    };
    // Only a model with BatchNorm buffers pays the extra sync at histogram steps.
    trainer_->on_histogram = [this, bn = !trainer_->model().buffers().empty()](const train::TensorHistogram& h) {
      history_.add(h);
      bn_due_ = bn;
    };
    trainer_->on_tensor_underflow = [this, interval = cfg.scaler.histogram_interval](const train::TensorUnderflow& u) {
      if (train::per_tensor_step(u.step, interval)) history_.add(u);
    };
    trainer_->start();
    pending_steps_ = 0;
    bn_due_ = false;
    read_bn_layers();  // their initial values (0 and 1), so the panel is there from the start
    {
      std::lock_guard lock(mu_);
      message_ = job.name + ": " + std::to_string(trainer_->budget()) + " updates on " + ctx_->info().name;
    }
    set(paused ? SessionState::Paused : SessionState::Running);
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

void TrainingSession::evaluate_now() {
  if (data_.test.count == 0) return;
  const train::Trainer::HeldOut h = trainer_->held_out(data_.test);
  history_.add_eval({uint32_t(steps_done_.load()), h.value, 0, h.metric});
  evaluated_at_ = last_applied_;
  read_bn_layers();  // the trainer has synced for the evaluation
}

// BatchNorm's running statistics on the host. Only where the trainer has
// synced (a pause, an evaluation, after a histogram step, the end), never
// every step: the read must not race the update pass that writes them.
void TrainingSession::read_bn_layers() {
  const train::Model& model = trainer_->model();
  if (model.buffers().empty()) return;
  history_.set_bn_layers(uint32_t(steps_done_.load()), bn_layer_stats(model.buffer_tensors(), model.read_buffers()));
}

void TrainingSession::run_command_safely(const std::function<void()>& cmd) {
  try {
    cmd();
  } catch (const std::exception& e) {
    trainer_.reset();
    std::fprintf(stderr, "vkamp-studio: %s\n", e.what());
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
               (trainer_ && (state_ == SessionState::Running || (state_ == SessionState::Paused && pending_steps_)));
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
      bool more = trainer_->advance();
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
      if (data_.test.count && steps_per_eval_ && last_applied_ >= next_eval_) {
        trainer_->sync();
        evaluate_now();
        next_eval_ += steps_per_eval_;
      }
      if (!more) {
        train::TrainSummary s = trainer_->finish();
        read_bn_layers();  // the final statistics, which a checkpoint or export keeps
        if (s.failed) {
          set(SessionState::Failed, s.failure);
        } else {
          if (evaluated_at_ != last_applied_) evaluate_now();
          if (job_.language_model && cfg_.lm.generate)
            history_.set_generated_text(app::generate_text(
                *trainer_, app::gpt_config(cfg_.lm, uint32_t(data_.vocab.size())), data_.vocab, cfg_.lm, cfg_.seed));
          set(SessionState::Finished);  // the trainer stays, for a checkpoint
        }
      }
    });
  }
  trainer_.reset();
  ctx_.reset();
}

}  // namespace vkamp::ui
