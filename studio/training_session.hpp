// Training on a worker thread for the app. The UI thread posts commands
// (start, pause, step, inject, new knobs, save); the worker runs them
// between steps and feeds a SharedHistory, so the UI never blocks on the
// GPU or on the trainer. The run itself is the samples' run loop
// (app/run_loop.hpp): the same evaluation lines, --metrics, --early-stop,
// --save-best, --save and summary; the session adds the live controls.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "app/run_history.hpp"
#include "app/run_loop.hpp"
#include "app/workloads.hpp"
#include "vkamp/config/train_config.hpp"
#include "vkamp/context.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::ui {

enum class SessionState { Idle, Running, Paused, Finished, Failed };
const char* state_name(SessionState s);

class TrainingSession {
 public:
  explicit TrainingSession(app::SharedHistory& history);
  ~TrainingSession();  // stops the run and joins the worker
  TrainingSession(const TrainingSession&) = delete;
  TrainingSession& operator=(const TrainingSession&) = delete;

  // Replaces the current run with a new one (loading data, building the
  // trainer). Errors end up in state() == Failed and message().
  void start(const app::Workload& job, const app::RunOptions& cfg, bool paused = false);
  void pause(bool paused);
  void step_once();  // while paused: one more step, then its record
  void inject_overflow();
  void set_scaler(const config::ScalerConfig& sc);
  void save_checkpoint(const std::string& path);

  SessionState state() const;
  std::string message() const;  // the last error or notice
  uint64_t steps_done() const;  // records read so far in this run
  // What a sample would exit with after this session's last run: 0, 1 (it
  // failed while training) or 2 (bad flags, data or files: refused).
  int exit_status() const { return exit_status_.load(); }

 private:
  void post(std::function<void()> cmd);
  void worker();
  void run_command_safely(const std::function<void()>& cmd);
  void end_run();
  void read_bn_layers();
  void set(SessionState s, const std::string& msg = {});

  app::SharedHistory& history_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> commands_;
  bool quit_ = false;
  SessionState state_ = SessionState::Idle;
  std::string message_;
  std::atomic<uint64_t> steps_done_{0};
  std::atomic<int> exit_status_{0};

  // Owned by the worker thread.
  std::unique_ptr<Context> ctx_;
  std::string ctx_device_;
  bool ctx_compiled_ = false;    // a run has started on ctx_: its first step compiled the pipelines
  std::string first_step_note_;  // shown in the status until the run's first step record comes
  std::unique_ptr<train::Trainer> trainer_;
  std::unique_ptr<app::RunLoop> loop_;  // over trainer_, gone before it
  app::Workload job_;   // the run's job and settings (a language model samples text at the end)
  app::RunOptions cfg_;
  app::Datasets data_;
  uint32_t pending_steps_ = 0;
  bool bn_due_ = false;  // a histogram step passed: read the running statistics after it
  std::thread thread_;  // last: starts after everything above exists
};

}  // namespace vkamp::ui
