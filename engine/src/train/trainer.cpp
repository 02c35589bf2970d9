// The Trainer: its construction (the model, feeder, ring, step program and,
// under MPI, the exchange) and the run (start, advance, finish, why a run
// failed), the state it reads back and the live controls. Its evaluations
// are trainer_evaluation.cpp, its checkpoints trainer_checkpoints.cpp.
#include "vkamp/train/trainer.hpp"

#include <cstdio>
#include <exception>

#include "vkamp/train/batch_feeder.hpp"
#include "vkamp/train/checkpointer.hpp"
#include "vkamp/train/evaluator.hpp"
#include "vkamp/train/grad_exchange.hpp"
#include "vkamp/train/replica_check.hpp"
#include "vkamp/train/step_params.hpp"
#include "vkamp/train/step_program.hpp"
#include "vkamp/train/sync_batch_norm.hpp"

namespace vkamp::train {
namespace {

std::vector<std::string> tensor_names(const Model& model) {
  std::vector<std::string> names;
  for (const auto& t : model.tensors()) names.push_back(t.name);
  return names;
}

}  // namespace

Trainer::Trainer(Context& ctx, const config::TrainConfig& cfg, const models::ModelSpec& spec, LossKind loss, const data::HostData& train)
    : Trainer(ctx, cfg, build_graph(spec), &spec, loss, train) {}

Trainer::Trainer(Context& ctx, const config::TrainConfig& cfg, graph::Graph model, LossKind loss, const data::HostData& train)
    : Trainer(ctx, cfg, std::move(model), nullptr, loss, train) {}

Trainer::Trainer(Context& ctx, const config::TrainConfig& cfg, graph::Graph model, const models::ModelSpec* spec, LossKind loss,
                 const data::HostData& train)
    : ctx_(ctx), comm_(dist::Communicator::world()), cfg_(cfg), loss_kind_(loss) {
  validate(cfg_);
  const uint32_t B = cfg.batch, M = cfg.grad_accum, N = uint32_t(comm_.size()), rank = uint32_t(comm_.rank());
  if (cfg.inject_rank >= 0 && uint32_t(cfg.inject_rank) >= N)
    throw ConfigError("--inject-rank " + std::to_string(cfg.inject_rank) + ": there " +
                      (N == 1 ? std::string("is 1 rank") : "are " + std::to_string(N) + " ranks"));
  const uint32_t model_inputs = model.input_tensor().shape.elements();
  if (train.features != model_inputs)
    throw ConfigError("the data has " + std::to_string(train.features) + " features but the model takes " +
                      std::to_string(model_inputs));
  // Global micro-batches: the N ranks together read N x B rows of the epoch order.
  steps_per_epoch_ = train.count / (B * N);
  if (steps_per_epoch_ < M)
    throw ConfigError("--batch " + std::to_string(B) + " x --grad-accum " + std::to_string(M) +
                      (N > 1 ? " x " + std::to_string(N) + " ranks" : std::string()) + " needs more than the " +
                      std::to_string(train.count) + " examples in the data");
  updates_per_epoch_ = steps_per_epoch_ / M;
  // --max-steps is the run's length, the data cycling as many epochs as it
  // takes (Hugging Face Trainer's max_steps overrides num_train_epochs).
  budget_ = cfg.max_steps ? cfg.max_steps : cfg.epochs * updates_per_epoch_;
  // --loss-scale suggest trains only the updates its suggestion reads.
  if (cfg.scaler.mode == config::LossScaleMode::Suggest) budget_ = std::min(budget_, cfg.scaler.suggest_steps);
  eval_period_ = cfg.eval_every ? cfg.eval_every : updates_per_epoch_;
  next_epoch_end_ = eval_period_;
  const uint32_t tries = cfg.scaler.policy == config::OverflowPolicy::Retry ? cfg.scaler.max_retries + 1 : 1;
  // Skipped and retried steps do not count towards the budget; this cap only
  // stops a run whose every step overflows under a static scale.
  max_attempts_ = budget_ * tries * 4 + 1000;

  const bool sgd = cfg.optimizer.kind == config::OptimizerKind::SGD;
  const bool m1 = !sgd || cfg.optimizer.momentum > 0, m2 = !sgd;
  // A language model's head runs in chunks where its graph allows
  // (logit_chunks.hpp); per-layer scaling's groups are planned on the whole graph.
  LogitChunking chunking;
  if (loss == LossKind::SoftmaxXent && cfg.scaler.mode != config::LossScaleMode::PerLayer)
    chunking = LogitChunking::from_env();
  model_ = spec ? std::make_unique<Model>(ctx, *spec, cfg.precision, B, cfg.seed, m1, m2, cfg.amp_level, cfg.recompute,
                                          chunking)
                : std::make_unique<Model>(ctx, std::move(model), cfg.precision, B, cfg.seed, m1, m2, cfg.amp_level,
                                          cfg.recompute, chunking);
  const FeedLayout layout{model_->outputs(), model_->positions(), model_->classes(), model_->reads_ids()};
  feeder_ = std::make_unique<BatchFeeder>(ctx, cfg_, loss, train, layout, kInFlight, DataShare{rank, N});
  ring_ = std::make_unique<StepRing>(ctx, tensor_names(*model_));
  tally_.set_underflow_scope(underflow_scope(cfg.precision, model_->tensors()));
  StepShape shape{budget_, uint32_t(model_->tensors().size()), StepProgram::partials_for(model_->param_elements()),
                  kRingSize, kHistRingSize};
  params_ = std::make_unique<StepParams>(ctx, cfg_, shape);
  program_ = std::make_unique<StepProgram>(ctx, cfg_, loss, *model_, *feeder_, *params_, *ring_, max_attempts_,
                                           rank, N);
  if (N > 1 && cfg.sync_bn) {
    // --sync-bn: part A is cut at every BatchNorm's statistics and column
    // sums, which the host merges across the ranks (StepRing's segments).
    // With one rank there is nothing to merge: plain BatchNorm, as PyTorch.
    sync_bn_ = std::make_unique<SyncBatchNorm>(comm_);
    model_->executor().set_host_sync(
        N, [this](Sequence& ending, Buffer& state, size_t offset, size_t bytes, graph::HostSync rule) -> Sequence& {
          return ring_->cut(ending, [this, &state, offset, bytes, rule] { sync_bn_->run(state, offset, bytes, rule); });
        });
  }
  if (N > 1) {
    exchange_ = std::make_unique<GradExchange>(comm_, program_->grad_sum(), program_->loss_values());
    ring_->between = [this] { exchange_->run(); };
  }
  record_step();
  ring_->on_record = [this](const StepRecord& r, const std::vector<DispatchTime>& t) { read_record(r, t); };
  checkpointer_ = std::make_unique<Checkpointer>(*model_, cfg.seed, program_->layer_scales(), uint32_t(comm_.rank()));
  evaluator_ = std::make_unique<Evaluator>(ctx, *model_, loss, B);
}

Trainer::~Trainer() = default;

void Trainer::record_step() {
  if (comm_.size() > 1)  // the host all-reduces between the micro-batches and the update
    ring_->record_split_slots([&](Sequence& seq) { program_->record_micro_batches(seq); },
                              [&](Sequence& seq) { program_->record_update(seq); });
  else  // one process keeps the whole step in one command buffer, and never waits
    ring_->record_slots([&](Sequence& seq) { program_->record(seq); });
}

void Trainer::flush() { ring_->drain(true); }

bool Trainer::data_resident() const { return feeder_->resident(); }
uint64_t Trainer::data_device_bytes() const { return feeder_->device_bytes(); }

void Trainer::read_record(const StepRecord& r, const std::vector<DispatchTime>& timings) {
  if (r.failed) failed_seen_ = true;  // fail-fast, or a non-finite master weight (r.nonfinite_master)
  if (r.done || r.failed) stop_seen_ = true;
  if (r.idle) return;  // a replay after the run stopped: nothing happened
  StepMetrics m = step_metrics(r);
  tally_.add(m, timings);
  overflow_cause_.add(m);
  last_applied_ = r.applied;
  cursor_seen_ = r.cursor;
  if (on_step) on_step(m);
  if (r.hist_slot >= 0 && on_histogram)
    for (const TensorHistogram& h : ring_->histograms_of(r)) on_histogram(h);
  const TensorUnderflow u{r.step, r.loss_scale, ring_->tensor_stats_of(r)};
  tally_.add(u);
  if (on_tensor_underflow) on_tensor_underflow(u);
  // applied grows by at most one per step, so no epoch end is passed over.
  if (eval_period_ && r.applied >= next_epoch_end_) {
    epoch_ended_ = EpochEnd{r.applied / std::max(updates_per_epoch_, 1u), r.step + 1, r.applied, {}, 0};
    next_epoch_end_ += eval_period_;
  }
}

TrainState Trainer::read_state() {
  flush();
  return params_->read_state();
}

AutoScaleState Trainer::read_auto_scale() {
  flush();
  return params_->read_auto_scale();
}

std::vector<LayerScaleReading> Trainer::read_layer_scales() {
  std::vector<LayerScaleReading> out;
  LayerScales* layers = program_->layer_scales();
  if (!layers) return out;
  flush();
  const std::vector<LayerScale> l = layers->read();
  for (size_t g = 0; g < l.size(); ++g)
    out.push_back({layers->groups().groups[g].node, l[g].scale, 1.0f / l[g].inv_scale, l[g].amax_window, l[g].overflow_total});
  return out;
}

TrainSummary Trainer::run() {
  start();
  while (advance()) {
  }
  return finish();
}

void Trainer::start() {
  tally_.start();
  std::exception_ptr error;
  try {
    if (cfg_.resume && !cfg_.checkpoint_path.empty()) load_checkpoint(cfg_.checkpoint_path);
  } catch (...) {
    error = std::current_exception();
  }
  // The last point where a rank can fail on its input alone: the ranks agree
  // here that all are ready (a rank that failed before constructing its
  // trainer joins from its error handler, samples/sample_main.cpp), so that
  // none starts a step whose all-reduce another will never join.
  const int first_failed = comm_.agree_ready(error == nullptr);
  if (error) std::rethrow_exception(error);
  if (first_failed >= 0) throw dist::PeerFailed(first_failed);
  last_checkpoint_ = 0;
  last_replica_check_ = 0;
  stop_requested_ = false;
  allreduce_waits_ = replica_waits_ = 0;
  waits0_ = ctx_.host_waits();
  pacing0_ = ctx_.pacing_waits();
  checkpoint_waits_ = epoch_waits_ = 0;
}

void Trainer::check_replicas_if_due(bool at_end) {
  if (!exchange_) return;
  const uint32_t submitted = ring_->submitted();
  if (!at_end && (!cfg_.replica_check_every || submitted == 0 ||
                  (steps_before_ + submitted) % cfg_.replica_check_every != 0 || last_replica_check_ == submitted))
    return;
  const uint64_t w = ctx_.host_waits();
  const TrainState st = read_state();
  // --sync-bn keeps the running statistics identical: nothing to average.
  check_replicas(comm_, *model_, st, st.step, /*average=*/!cfg_.sync_bn);
  last_replica_check_ = submitted;
  replica_waits_ += ctx_.host_waits() - w;
}

// The next step could apply the epoch's last update (or one past it, were a
// step in flight to apply it): first read every record, so that the epoch
// end is seen before any step of the next epoch runs.
void Trainer::drain_before_epoch_end() {
  if (last_applied_ + ring_->in_flight() < next_epoch_end_) return;
  const uint64_t w = ctx_.host_waits();
  flush();
  epoch_waits_ += ctx_.host_waits() - w;
}

bool Trainer::advance() {
  if (stop_seen_ || stop_requested_ || ring_->submitted() >= max_attempts_) return false;
  checkpoint_if_due();
  check_replicas_if_due(false);
  if (on_epoch_end) {
    end_epoch_if_due();
    drain_before_epoch_end();
    end_epoch_if_due();
  }
  if (stop_seen_ || stop_requested_) return false;
  ring_->make_room();
  feeder_->stage(cursor_seen_, ring_->in_flight());
  const uint64_t w = ctx_.host_waits();
  ring_->submit_next();
  if (exchange_) allreduce_waits_ += ctx_.host_waits() - w;
  ring_->drain(false);
  return !stop_seen_ && ring_->submitted() < max_attempts_;
}

TrainSummary Trainer::finish() {
  const uint64_t loop_waits =
      ctx_.host_waits() - waits0_ - checkpoint_waits_ - epoch_waits_ - allreduce_waits_ - replica_waits_;
  const uint64_t pacing = ctx_.pacing_waits() - pacing0_;
  flush();
  // Samples per second of the whole job: every rank's step is its share of
  // one N x B x M-sample update.
  TrainSummary s = tally_.summary(cfg_.batch * cfg_.grad_accum * uint32_t(comm_.size()));
  end_epoch_if_due();
  s.host_waits_in_loop = loop_waits;
  s.host_waits_between_epochs = epoch_waits_;
  s.pacing_waits = pacing;
  s.ranks = uint32_t(comm_.size());
  s.commands_per_step = ring_->commands_per_step();
  // The final checkpoint keeps each rank's running statistics as they were
  // before the last replica check averages them, so that a longer run
  // resumed from it is the uninterrupted one (checkpoint_if_due).
  std::vector<float> rank_buffers;
  if (exchange_ && !cfg_.checkpoint_path.empty() && !model_->buffers().empty())
    rank_buffers = gather_buffers(comm_, *model_);
  if (exchange_) {
    check_replicas_if_due(true);
    s.host_waits_for_allreduce = allreduce_waits_;
    s.host_waits_for_replica_checks = replica_waits_;
    s.allreduce_bytes_per_step = exchange_->bytes_per_step();
    s.local_overflow_steps = exchange_->local_overflows();
    if (exchange_->exchanges()) s.allreduce_ms_per_step = 1e3 * exchange_->seconds() / exchange_->exchanges();
  }
  const TrainState st = params_->read_state();
  s.final_scale = st.scale;
  s.failure = failure_text(st);
  s.failed = !s.failure.empty();
  if (comm_.rank() == 0 && !s.failed && !cfg_.checkpoint_path.empty())
    checkpointer_->save(cfg_.checkpoint_path, st, params_->read_auto_scale(),
                        rank_buffers.empty() ? nullptr : &rank_buffers);
  return s;
}

// Why the run stopped early, or "" when it spent its budget. A non-finite
// master: the update of step st.step - 1 made it so, and step_control
// stopped the run at the next step (st.step did not advance) or the budget
// ended with that update (st.step advanced past it).
std::string Trainer::failure_text(const TrainState& st) const {
  if (st.nonfinite_master != 0) {
    const uint32_t index = ~st.nonfinite_master;
    std::string where = "parameter " + std::to_string(index);
    for (const auto& t : model_->tensors())
      if (index >= t.offset && index < t.offset + t.size) where = t.name + "[" + std::to_string(index - t.offset) + "]";
    const std::string why = cfg_.scaler.policy == config::OverflowPolicy::Apply
                                ? " (--overflow-policy apply applied an overflowed gradient; use skip or retry)"
                                : " (the update overflowed fp32: lower the learning rate or clip)";
    return "the fp32 master weights became non-finite at step " + std::to_string(st.step - 1) + ": first " + where +
           why + "; training stopped";
  }
  if (failed_seen_ || st.failed) {
    char floor[32];
    std::snprintf(floor, sizeof floor, "%g", cfg_.scaler.min_loss_scale);
    const uint32_t from = overflow_cause_.overflows_from();
    bool injected = false;
    for (const config::StepRange& r : cfg_.inject_overflow) injected = injected || (from >= r.first && from <= r.last);
    return std::string("the loss scale sat at min_loss_scale (") + floor + ") through " +
           std::to_string(cfg_.scaler.fail_after_overflows) + " consecutive overflows, up to step " + std::to_string(st.step) +
           "; " + overflow_cause_.explain(cfg_.precision, injected);
  }
  if (!st.done && !stop_requested_)
    return "stopped after " + std::to_string(ring_->submitted()) + " steps with only " +
           std::to_string(st.applied) + " of " + std::to_string(budget_) +
           " updates applied: nearly every step overflowed";
  return "";
}

void Trainer::set_scaler(const config::ScalerConfig& sc) {
  config::TrainConfig next = with_live_scaler(cfg_, sc);
  flush();
  params_->set_scaler(sc, cfg_.grad_accum);
  cfg_ = next;
}

void Trainer::inject_overflow_next() {
  flush();
  if (program_->inject_overflow_at(params_->read_state().step)) record_step();  // the pass, armed now
}

}  // namespace vkamp::train
