// The training loop, a facade over its parts: the BatchFeeder (the data
// on the GPU), the StepProgram (the whole step, recorded once per in-flight
// slot and replayed; every decision is made on the GPU), the StepRing (the
// host reads each step's record a few steps later), StepParams (settings
// and state on the GPU), the Checkpointer and the Evaluator.
//
// Under mpirun (dist::Communicator::world() has more than one rank) each
// process is one data-parallel replica: its BatchFeeder stages its share of
// every global batch, the step is split around a host all-reduce of the
// fp32 gradients (GradExchange), the replicas are compared every
// cfg.replica_check_every steps, and only rank 0 writes checkpoints.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vkamp/context.hpp"
#include "vkamp/dist/communicator.hpp"
#include "vkamp/config/train_config.hpp"
#include "vkamp/train/gpu_state.hpp"
#include "vkamp/data/host_data.hpp"
#include "vkamp/train/loss_kind.hpp"
#include "vkamp/train/model.hpp"
#include "vkamp/train/overflow_cause.hpp"
#include "vkamp/train/run_tally.hpp"
#include "vkamp/train/step_metrics.hpp"
#include "vkamp/train/step_ring.hpp"

namespace vkamp::train {

class BatchFeeder;
class StepParams;
class StepProgram;
class Checkpointer;
class Evaluator;
class GradExchange;
class SyncBatchNorm;

// Per-layer loss scaling (--loss-scale per-layer): one scale group as the
// run left it, for the run summary and the studio.
struct LayerScaleReading {
  std::string layer;       // the node that starts the group ("fc1")
  float scale = 0;         // its loss scale for the next step
  float last_scale = 0;    // the scale its gradients carried in the last step
  float amax = 0;          // the largest unscaled |gradient| in its history window
  uint32_t overflows = 0;  // steps where its gradients held an inf or NaN
};

class Trainer {
 public:
  Trainer(Context& ctx, const config::TrainConfig& cfg, const models::ModelSpec& spec, LossKind loss, const data::HostData& train);
  // Any graph (graph/graph.hpp) as the model.
  Trainer(Context& ctx, const config::TrainConfig& cfg, graph::Graph model, LossKind loss, const data::HostData& train);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;
  Context& context() const { return ctx_; }

  // Called on the host thread for every step record, in step order.
  std::function<void(const StepMetrics&)> on_step;
  std::function<void(const TensorHistogram&)> on_histogram;
  // Every step's underflow accounting per tensor (StepMetrics has the totals).
  std::function<void(const TensorUnderflow&)> on_tensor_underflow;
  // Called once per epoch (or every cfg.eval_every updates), once that
  // update is applied and before the next step is submitted, with the
  // held-out evaluation when one is set: accuracy, the MSE, or for a
  // language model (logits at every position) the mean loss. Setting it
  // makes the host drain the steps before each such point (counted in
  // TrainSummary::host_waits_between_epochs, not in the loop's).
  std::function<void(const EpochEnd&)> on_epoch_end;
  // The held-out set on_epoch_end evaluates: all of it, or with
  // cfg.eval_iters, that many batches spread evenly over it.
  void set_held_out(data::HostData data);
  bool has_held_out() const { return held_out_ && held_out_->count; }
  // The rows each on_epoch_end evaluation reads, and the rows of the set
  // given (more with cfg.eval_iters): the app says when it sampled.
  uint64_t held_out_rows() const { return held_out_ ? held_out_->count : 0; }
  uint64_t held_out_rows_given() const { return held_out_given_; }
  // The metric held_out() and on_epoch_end report: "accuracy", "mse", or a
  // language model's "loss" (known before any evaluation: the app checks
  // what --early-stop-monitor watches against it).
  std::string held_out_metric() const;
  // When set, the progress of each held-out evaluation (held_out() and
  // on_epoch_end's): rows done and rows in all, a few dozen times over it.
  std::function<void(uint64_t done, uint64_t total)> on_eval_progress;

  // Trains until the update budget (epochs) is spent or fail-fast trips.
  // Checkpoints as configured. Resumes first when cfg.resume is set.
  // run() is start(), advance() until it returns false, then finish().
  TrainSummary run();
  void start();
  // Submits one more step and reads the records that are ready; false once
  // the run is over (budget spent, fail-fast, or every step overflowing).
  bool advance();
  TrainSummary finish();
  // Ends the run before its next step (the app's --early-stop, from
  // on_epoch_end): advance() returns false, and finish() reports no
  // failure for the budget left unspent.
  void request_stop() { stop_requested_ = true; }
  // Waits for the submitted steps and reads their records (a pause, a
  // single step in the app).
  void sync() { flush(); }

  // Live controls (the app). Each waits for the steps in flight first.
  // New dynamic-scaling knobs, validated like the config; the current
  // scale is clamped into [min, max]. Throws ConfigError.
  void set_scaler(const config::ScalerConfig& sc);
  // Writes an inf into a gradient at the next step, as --inject-overflow.
  void inject_overflow_next();
  const config::TrainConfig& config() const { return cfg_; }

  // Accuracy (SoftmaxXent) or mean squared error (MSE) over a dataset.
  double evaluate(const data::HostData& data);
  // The mean cross-entropy over every labelled position (a language model's
  // validation loss, nats per token); the MSE for MSE.
  double mean_loss(const data::HostData& data);
  // The held-out metric on_epoch_end reports for `data`: "accuracy" or
  // "mse", or a language model's (logits at every position) "loss"; and
  // the mean loss from the same pass (EpochEnd::loss).
  struct HeldOut {
    std::string metric;
    double value = 0, loss = 0;
  };
  HeldOut held_out(const data::HostData& data);
  // The model's outputs (fp32, rows x outputs) for any number of rows of x
  // (rows x inputs), batched internally.
  std::vector<float> predict(const std::vector<float>& x, uint32_t rows);

  uint32_t budget() const { return budget_; }
  uint32_t steps_per_epoch() const { return steps_per_epoch_; }
  uint32_t updates_per_epoch() const { return updates_per_epoch_; }
  // The epochs the budget reaches into, the last perhaps in part.
  uint32_t epochs() const { return (budget_ + updates_per_epoch_ - 1) / updates_per_epoch_; }
  // Whether the training set is in device memory or streamed from the host
  // (--data-on-gpu), and the device memory it takes either way.
  bool data_resident() const;
  uint64_t data_device_bytes() const;
  Model& model() { return *model_; }
  const Model& model() const { return *model_; }
  // Blocking reads of the GPU state (waits for all submitted work).
  TrainState read_state();
  // --loss-scale auto's window and choices (scale_choice.h).
  AutoScaleState read_auto_scale();
  // Per-layer loss scaling's groups, in forward order; empty in the other modes.
  std::vector<LayerScaleReading> read_layer_scales();
  void save_checkpoint(const std::string& path);
  void load_checkpoint(const std::string& path);

 private:
  // spec: the model string's spec when there is one (checkpoints, exports).
  Trainer(Context& ctx, const config::TrainConfig& cfg, graph::Graph model, const models::ModelSpec* spec, LossKind loss,
          const data::HostData& train);
  void flush();
  void read_record(const StepRecord& r, const std::vector<DispatchTime>& timings);
  // Records the step into the ring's slots (again after the injection pass is armed).
  void record_step();
  void checkpoint_if_due();
  void check_replicas_if_due(bool at_end);
  void drain_before_epoch_end();
  void end_epoch_if_due();
  std::string failure_text(const TrainState& st) const;
  HeldOut held_out_now(const data::HostData& data);  // held_out() with no steps in flight

  Context& ctx_;
  dist::Communicator& comm_;
  config::TrainConfig cfg_;
  LossKind loss_kind_;
  uint32_t steps_per_epoch_ = 0, updates_per_epoch_ = 0, budget_ = 0, max_attempts_ = 0;
  std::unique_ptr<Model> model_;
  std::unique_ptr<BatchFeeder> feeder_;
  std::unique_ptr<StepParams> params_;
  std::unique_ptr<StepProgram> program_;
  std::unique_ptr<Checkpointer> checkpointer_;
  std::unique_ptr<Evaluator> evaluator_;
  std::unique_ptr<GradExchange> exchange_;  // world > 1 only
  std::unique_ptr<SyncBatchNorm> sync_bn_;  // --sync-bn with world > 1 only
  // Last, so it is destroyed first: its slots wait for the steps in flight,
  // which use the buffers of the parts above.
  std::unique_ptr<StepRing> ring_;

  bool stop_seen_ = false, failed_seen_ = false, stop_requested_ = false;
  RunTally tally_;
  OverflowCause overflow_cause_;  // what the records showed, for failure_text
  uint32_t last_checkpoint_ = 0;
  uint64_t waits0_ = 0, pacing0_ = 0, checkpoint_waits_ = 0, epoch_waits_ = 0;
  uint64_t allreduce_waits_ = 0, replica_waits_ = 0;
  uint32_t last_replica_check_ = 0;
  // The steps the loaded checkpoint had run: replica checks (which average
  // BatchNorm's running statistics) fall on the same steps as in the
  // uninterrupted run.
  uint32_t steps_before_ = 0;
  // Epoch ends, from the records' applied counts.
  // Evaluation points (on_epoch_end): every eval_period_ updates, from the records' applied counts.
  uint32_t last_applied_ = 0, next_epoch_end_ = 0, eval_period_ = 0;
  // The data cursor (micro-batches consumed) of the last record read: the
  // feeder stages from there.
  uint32_t cursor_seen_ = 0;
  std::optional<EpochEnd> epoch_ended_;
  std::optional<data::HostData> held_out_;
  uint64_t held_out_given_ = 0;
};

}  // namespace vkamp::train
