#include "vkamp/train/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>

#include "vkamp/error.hpp"
#include "vkamp/ops/losses.hpp"
#include "vkamp/ops/reduce.hpp"
#include "vkamp/train/checkpoint_file.hpp"

namespace vkamp::train {
namespace {

struct GatherPush {
  uint32_t rows, width, count, steps_per_epoch, epochs_stored, micro;
};

uint32_t mode_code(LossScaleMode m) {
  return m == LossScaleMode::None ? 0 : m == LossScaleMode::Static ? 1 : 2;
}

// The OPTIMIZER specialization constant of optimizer.comp and TrainParams.optimizer.
uint32_t optimizer_code(OptimizerKind k) {
  return k == OptimizerKind::SGD ? 0 : k == OptimizerKind::Adam ? 1 : 2;
}

// The loss-scaling part of TrainParams.
void set_scaler_params(TrainParams& p, const ScalerConfig& sc) {
  p.scale_mode = mode_code(sc.mode);
  p.growth_factor = float(sc.growth_factor);
  p.backoff_factor = float(sc.backoff_factor);
  p.growth_interval = sc.growth_interval;
  p.min_scale = float(sc.min_scale);
  p.max_scale = float(std::min(sc.max_scale, 3.4028234663852886e38));
  p.hysteresis = std::max(1u, sc.hysteresis);
  p.consecutive_hysteresis = sc.consecutive_hysteresis ? 1 : 0;
  p.policy = sc.policy == OverflowPolicy::Skip ? 0 : sc.policy == OverflowPolicy::Apply ? 1 : 2;
  p.max_retries = sc.max_retries;
  p.fail_after = sc.fail_after;
}

float initial_scale(const ScalerConfig& s) {
  return s.mode == LossScaleMode::None ? 1.0f : float(s.initial_scale);
}

// Adam's bias corrections (1 - beta1^t, 1 - beta2^t) for t = 1, 2, ...,
// in double from the fp32 betas the moment updates use, so that each moment
// is divided by exactly the sum of its weights (1 - b) b^(t-k), rounded once.
// The table ends at the budget, or where both corrections round to 1.
std::vector<float> bias_correction_table(const OptimizerConfig& oc, uint32_t budget) {
  std::vector<float> table;
  if (oc.kind == OptimizerKind::SGD) return table;
  const double b1 = float(oc.beta1), b2 = float(oc.beta2);
  for (uint32_t t = 1; t <= budget; ++t) {
    const float c1 = float(1 - std::pow(b1, t)), c2 = float(1 - std::pow(b2, t));
    if (c1 == 1.0f && c2 == 1.0f) break;
    table.push_back(c1);
    table.push_back(c2);
  }
  return table;
}

template <class T>
std::vector<uint8_t> bytes_of(const T* p, size_t n) {
  auto* b = reinterpret_cast<const uint8_t*>(p);
  return std::vector<uint8_t>(b, b + n * sizeof(T));
}

}  // namespace

Trainer::Trainer(Context& ctx, const TrainConfig& cfg, const ModelSpec& spec, LossKind loss,
                 const HostData& train)
    : Trainer(ctx, cfg, build_graph(spec), &spec, loss, train) {}

Trainer::Trainer(Context& ctx, const TrainConfig& cfg, graph::Graph model, LossKind loss, const HostData& train)
    : Trainer(ctx, cfg, std::move(model), nullptr, loss, train) {}

Trainer::Trainer(Context& ctx, const TrainConfig& cfg, graph::Graph model, const ModelSpec* spec, LossKind loss,
                 const HostData& train)
    : ctx_(ctx), cfg_(cfg), loss_kind_(loss), fmt_(cfg.precision) {
  validate(cfg_);
  count_ = train.count;
  features_ = train.features;
  const uint32_t B = cfg.batch, M = cfg.grad_accum;
  const uint32_t model_inputs = model.input_tensor().shape.elements();
  if (features_ != model_inputs)
    throw ConfigError("the data has " + std::to_string(features_) + " features but the model takes " +
                      std::to_string(model_inputs));
  steps_per_epoch_ = count_ / B;
  if (steps_per_epoch_ < M)
    throw ConfigError("--batch " + std::to_string(B) + " x --grad-accum " + std::to_string(M) +
                      " needs more than the " + std::to_string(count_) + " examples in the data");
  budget_ = cfg.epochs * (steps_per_epoch_ / M);
  uint32_t tries = cfg.scaler.policy == OverflowPolicy::Retry ? cfg.scaler.max_retries + 1 : 1;
  // Skipped and retried steps do not count towards the budget; this cap only
  // stops a run whose every step overflows under a static scale.
  max_attempts_ = budget_ * tries * 4 + 1000;
  epochs_stored_ = std::min<uint32_t>(cfg.epochs + 2, 64);

  bool sgd = cfg.optimizer.kind == OptimizerKind::SGD;
  const bool m1 = !sgd || cfg.optimizer.momentum > 0, m2 = !sgd;
  model_ = spec ? std::make_unique<Model>(ctx, *spec, fmt_, B, cfg.seed, m1, m2)
                : std::make_unique<Model>(ctx, std::move(model), fmt_, B, cfg.seed, m1, m2);
  const uint32_t outputs = model_->outputs();
  const size_t eb = format_bytes(fmt_);

  // The dataset stays resident on the GPU in the storage format.
  if (train.x.size() != size_t(count_) * features_) throw Error("HostData: x has the wrong size");
  auto xb = pack(fmt_, train.x);
  data_x_ = std::make_unique<Buffer>(ctx, xb.size());
  data_x_->write(xb.data(), xb.size());
  batch_x_ = std::make_unique<Buffer>(ctx, size_t(B) * features_ * eb);
  if (loss == LossKind::SoftmaxXent) {
    if (train.labels.size() != count_) throw Error("HostData: labels have the wrong size");
    for (uint32_t l : train.labels)
      if (l >= outputs) throw ConfigError("a label (" + std::to_string(l) + ") is not below the model's " +
                                          std::to_string(outputs) + " outputs");
    data_y_ = std::make_unique<Buffer>(ctx, size_t(count_) * 4);
    data_y_->write(train.labels);
    batch_y_ = std::make_unique<Buffer>(ctx, size_t(B) * 4);
  } else {
    if (train.targets.size() != size_t(count_) * outputs) throw Error("HostData: targets have the wrong size");
    auto yb = pack(fmt_, train.targets);
    data_y_ = std::make_unique<Buffer>(ctx, yb.size());
    data_y_->write(yb.data(), yb.size());
    batch_y_ = std::make_unique<Buffer>(ctx, size_t(B) * outputs * eb);
  }

  // One seeded permutation per epoch, all uploaded up front.
  std::vector<uint32_t> perm(size_t(epochs_stored_) * count_);
  for (uint32_t e = 0; e < epochs_stored_; ++e) {
    auto first = perm.begin() + size_t(e) * count_;
    std::iota(first, first + count_, 0u);
    std::mt19937_64 gen(cfg.seed * 0x9E3779B97F4A7C15ull + e + 1);
    std::shuffle(first, first + count_, gen);
  }
  perm_ = std::make_unique<Buffer>(ctx, perm.size() * 4);
  perm_->write(perm);

  const auto& tensors = model_->tensors();
  const uint32_t total = model_->param_elements();
  // About 16 gradients per invocation: enough workgroups to fill a GPU for
  // big models, few enough that the per-workgroup reductions (barriers)
  // stay cheap; on lavapipe 1 per invocation made this pass 20% of a step.
  partials_ = std::max(1u, std::min(div_up(total, 4096), 1024u));

  TrainParams p{};
  const ScalerConfig& sc = cfg.scaler;
  set_scaler_params(p, sc);
  p.budget = budget_;
  p.micro_batches = M;
  p.histogram_interval = sc.histogram_interval;
  const OptimizerConfig& oc = cfg.optimizer;
  p.optimizer = optimizer_code(oc.kind);
  p.base_lr = float(oc.lr);
  p.momentum = float(oc.momentum);
  p.beta1 = float(oc.beta1);
  p.beta2 = float(oc.beta2);
  p.eps = float(oc.eps);
  p.weight_decay = float(oc.weight_decay);
  p.schedule = oc.schedule == LrSchedule::Constant ? 0 : oc.schedule == LrSchedule::Step ? 1 : 2;
  p.warmup_steps = oc.warmup_steps;
  p.step_size = oc.step_size;
  p.gamma = float(oc.gamma);
  p.max_norm = float(cfg.clip.max_norm);
  p.max_value = float(cfg.clip.max_value);
  p.ring_size = kRingSize;
  p.hist_ring_size = kHistRingSize;
  p.tensors = uint32_t(tensors.size());
  p.partials = partials_;
  const std::vector<float> bias_table = bias_correction_table(oc, budget_);
  p.bias_table_len = uint32_t(bias_table.size() / 2);
  bias_correction_ = std::make_unique<Buffer>(ctx, std::max<size_t>(bias_table.size(), 2) * 4);
  if (!bias_table.empty()) bias_correction_->write(bias_table);
  params_ = std::make_unique<Buffer>(ctx, sizeof(p));
  params_->write(&p, sizeof(p));

  TrainState st{};
  st.scale = initial_scale(sc);
  st.grad_multiplier = st.scale / float(M);
  st.hysteresis_left = p.hysteresis;
  state_ = std::make_unique<Buffer>(ctx, sizeof(st));
  state_->write(&st, sizeof(st));

  partial_sq_ = std::make_unique<Buffer>(ctx, partials_ * 8);  // (s, k) per partial, amp_check.comp
  // With micro-batches, the gradients are summed here in fp32; with one,
  // the 16-bit gradient is read directly and this is a placeholder binding.
  grad_sum_ = std::make_unique<Buffer>(ctx, M > 1 ? size_t(total) * 4 : 4);
  partial_bad_ = std::make_unique<Buffer>(ctx, partials_ * 4);
  loss_ = std::make_unique<Buffer>(ctx, M * 4);
  row_loss_ = std::make_unique<Buffer>(ctx, size_t(B) * 4);
  reduce_scratch_ = std::make_unique<Buffer>(ctx, ops::reduce_scratch_bytes(B * outputs));
  size_t hist_words = tensors.size() * kHistBins;
  hist_ = std::make_unique<Buffer>(ctx, hist_words * 4);
  hist_->fill(0);
  hist_ring_ = std::make_unique<Buffer>(ctx, kHistRingSize * hist_words * 4, Memory::Host);
  hist_ring_->fill(0);
  ring_ = std::make_unique<Buffer>(ctx, kRingSize * sizeof(StepRecord), Memory::Host);
  ring_->fill(0xFFFFFFFFu);
  std::vector<uint32_t> ranges;
  for (auto& t : tensors) {
    ranges.push_back(t.offset);
    ranges.push_back(t.offset + t.size);
  }
  tensor_ranges_ = std::make_unique<Buffer>(ctx, ranges.size() * 4);
  tensor_ranges_->write(ranges);
  // Fault injection: one bit per step, from --inject-overflow and the app's
  // button. Always recorded (one thread per step) so the app can inject live.
  inject_bits_.assign((max_attempts_ + 31) / 32, 0);
  for (auto r : cfg.inject_overflow)
    for (uint64_t s = r.first; s <= r.last && s < max_attempts_; ++s) inject_bits_[s / 32] |= 1u << (s % 32);
  inject_mask_ = std::make_unique<Buffer>(ctx, inject_bits_.size() * 4);
  inject_mask_->write(inject_bits_);

  for (uint32_t i = 0; i < kInFlight; ++i) {
    slots_.push_back(std::make_unique<Sequence>(ctx, /*timestamps=*/true, 1024));
    record_step(*slots_.back());
  }
}

Trainer::~Trainer() {
  for (auto& s : slots_) s->poll();  // Sequence's destructor waits for the rest
}

void Trainer::record_step(Sequence& seq) {
  const uint32_t B = cfg_.batch, M = cfg_.grad_accum, C = model_->outputs();
  const uint32_t total = model_->param_elements();
  const std::string v = ctx_.variant(fmt_);
  BufferView scale_view(*state_, 0, 4);  // TrainState::grad_multiplier

  seq.begin();
  for (uint32_t m = 0; m < M; ++m) {
    GatherPush gx{B, features_, count_, steps_per_epoch_, epochs_stored_, m};
    Kernel& gather = ctx_.kernel({"gather." + v, 4, sizeof(GatherPush), {}});
    seq.dispatch(gather, {*state_, *perm_, *data_x_, *batch_x_}, gx, {std::min(div_up(B * features_, 256), 65535u)}, "gather");
    if (loss_kind_ == LossKind::SoftmaxXent) {
      Kernel& gl = ctx_.kernel({"gather_labels", 4, sizeof(GatherPush), {}});
      seq.dispatch(gl, {*state_, *perm_, *data_y_, *batch_y_}, gx, {div_up(B, 64)}, "gather_labels");
    } else {
      GatherPush gy{B, C, count_, steps_per_epoch_, epochs_stored_, m};
      seq.dispatch(gather, {*state_, *perm_, *data_y_, *batch_y_}, gy, {std::min(div_up(B * C, 256), 65535u)}, "gather");
    }
    model_->record_forward(seq, *batch_x_, B);
    if (loss_kind_ == LossKind::SoftmaxXent) {
      ops::softmax_xent_forward(seq, fmt_, model_->output(), *batch_y_, *row_loss_, *loss_, B, C, m);
      ops::softmax_xent_backward(seq, fmt_, model_->output(), *batch_y_, scale_view, model_->doutput(), B, C);
    } else {
      ops::mse_forward(seq, fmt_, model_->output(), *batch_y_, *reduce_scratch_, *loss_, B * C, m);
      ops::mse_backward(seq, fmt_, model_->output(), *batch_y_, scale_view, model_->doutput(), B * C);
    }
    // Every micro-batch writes a fresh 16-bit gradient (where underflow
    // happens, as with one batch); with M > 1 it is then added into the fp32
    // sum, so the sum is rounded to fp32, not to the 16-bit format M times.
    model_->record_backward(seq, *batch_x_, B, false);
    // Injected into the first micro-batch's 16-bit gradient, so the inf must
    // survive the accumulation of the others to be caught.
    if (m == 0) {
      struct { uint32_t steps, index; } push{max_attempts_, model_->tensors()[0].offset};
      Kernel& k = ctx_.kernel({"inject_overflow." + v, 3, sizeof(push), {}});
      seq.dispatch(k, {*state_, *inject_mask_, model_->grads()}, push, {1}, "inject_overflow");
    }
    if (M > 1) {
      struct { uint32_t n, first; } ap{total, m == 0 ? 1u : 0u};
      Kernel& k = ctx_.kernel({"grad_accumulate." + v, 2, sizeof(ap), {}});
      seq.dispatch(k, {model_->grads(), *grad_sum_}, ap, {std::min(div_up(total, 256), 65535u)}, "grad_accumulate");
    }
  }
  struct { uint32_t n; } np{total};
  const uint32_t accumulated = M > 1 ? 1 : 0;  // ACCUMULATED: read the fp32 sum
  const std::string pre = ctx_.decision_suffix();
  Kernel& amp = ctx_.kernel({"amp_check." + v + pre, 8, sizeof(np), {accumulated}});
  seq.dispatch(amp, {*state_, *params_, model_->grads(), *tensor_ranges_, *partial_sq_, *partial_bad_, *hist_,
                     *grad_sum_},
               np, {partials_}, "amp_check");
  Kernel& ctl = ctx_.kernel({"step_control" + pre, 9, 0, {}});
  seq.dispatch(ctl, {*state_, *params_, *partial_sq_, *partial_bad_, *loss_, *hist_, *hist_ring_, *ring_,
                     *bias_correction_},
               nullptr, 0, {1}, "step_control");
  Kernel& optk =
      ctx_.kernel({"optimizer." + v + pre, 8, sizeof(np), {optimizer_code(cfg_.optimizer.kind), accumulated}});
  seq.dispatch(optk, {*state_, *params_, model_->grads(), model_->master(), model_->moment1(), model_->moment2(),
                      model_->working(), *grad_sum_},
               np, {std::min(div_up(total, 256), 65535u)}, "optimizer");
  seq.end();
}

void Trainer::read_record(uint32_t replay, size_t slot) {
  StepRecord r;
  ring_->read(&r, sizeof(r), size_t(replay % kRingSize) * sizeof(r));
  if (r.replay != replay)
    throw Error("metrics ring out of step: expected replay " + std::to_string(replay) + ", found " +
                std::to_string(r.replay));
  StepMetrics m;
  m.step = r.step;
  m.loss = r.loss;
  m.loss_scale = r.loss_scale;
  m.skipped = r.skipped != 0;
  m.overflow = r.overflow != 0;
  m.grad_norm = r.grad_norm;
  m.lr = r.lr;
  m.retries = r.retries;
  m.applied = r.applied;
  m.cursor = r.cursor;
  if (r.failed) failed_seen_ = true;  // fail-fast, or a non-finite master weight (r.nonfinite_master)
  if (r.done || r.failed) stop_seen_ = true;
  if (r.idle) return;  // a replay after the run stopped: nothing happened

  for (auto& t : slots_[slot]->timings()) {
    m.step_time_ms += t.ms;
    kernel_ms_sum_[t.label] += t.ms;
    if (t.label == "amp_check" || t.label == "step_control" || t.label == "inject_overflow") amp_ms_sum_ += t.ms;
  }
  if (m.step_time_ms > 0) {
    gpu_ms_sum_ += m.step_time_ms;
    ++timed_steps_;
  }
  summary_.steps++;
  summary_.applied = r.applied;
  summary_.skipped += m.skipped;
  summary_.overflows += m.overflow;
  summary_.last_loss = m.loss;
  if (on_step) on_step(m);
  if (r.hist_slot >= 0 && on_histogram) publish_histograms(r);
}

void Trainer::publish_histograms(const StepRecord& r) {
  const auto& tensors = model_->tensors();
  std::vector<uint32_t> words(tensors.size() * kHistBins);
  hist_ring_->read(words.data(), words.size() * 4, size_t(r.hist_slot) * words.size() * 4);
  for (size_t t = 0; t < tensors.size(); ++t) {
    TensorHistogram h;
    h.step = r.step;
    h.tensor = tensors[t].name;
    h.loss_scale = r.loss_scale;
    std::copy_n(words.begin() + t * kHistBins, kHistBins, h.bins.begin());
    on_histogram(h);
  }
}

void Trainer::drain_completed(bool block_all) {
  while (drained_ < submitted_) {
    size_t slot = drained_ % kInFlight;
    Sequence& s = *slots_[slot];
    if (!s.poll()) {
      if (!block_all) return;
      s.wait();
    }
    read_record(drained_, slot);
    ++drained_;
  }
}

void Trainer::submit_next() {
  size_t slot = submitted_ % kInFlight;
  Sequence& s = *slots_[slot];
  // Before reusing the slot, its previous step must be read: pace on it.
  while (drained_ + kInFlight <= submitted_) {
    size_t ds = drained_ % kInFlight;
    if (!slots_[ds]->poll()) slots_[ds]->wait_for_reuse();
    read_record(drained_, ds);
    ++drained_;
  }
  s.submit();
  ++submitted_;
}

TrainState Trainer::read_state() {
  flush();
  TrainState st;
  state_->read(&st, sizeof(st));
  return st;
}

TrainSummary Trainer::run() {
  start();
  while (advance()) {
  }
  return finish();
}

void Trainer::start() {
  t0_ = std::chrono::steady_clock::now();
  if (cfg_.resume && !cfg_.checkpoint_path.empty()) load_checkpoint(cfg_.checkpoint_path);
  last_checkpoint_ = 0;
  waits0_ = ctx_.host_waits();
  pacing0_ = ctx_.pacing_waits();
  checkpoint_waits_ = 0;
}

bool Trainer::advance() {
  if (stop_seen_ || submitted_ >= max_attempts_) return false;
  if (cfg_.checkpoint_every && !cfg_.checkpoint_path.empty() && submitted_ > 0 &&
      submitted_ % cfg_.checkpoint_every == 0 && last_checkpoint_ != submitted_) {
    uint64_t w = ctx_.host_waits();
    // The last good checkpoint is kept: weights that went non-finite in an
    // update no step record has reported yet must not overwrite it.
    TrainState st = read_state();
    if (!failed_seen_ && !st.failed && st.nonfinite_master == 0) save_checkpoint(cfg_.checkpoint_path);
    last_checkpoint_ = submitted_;
    checkpoint_waits_ += ctx_.host_waits() - w;
    if (stop_seen_) return false;
  }
  submit_next();
  drain_completed(false);
  return !stop_seen_ && submitted_ < max_attempts_;
}

TrainSummary Trainer::finish() {
  summary_.host_waits_in_loop = ctx_.host_waits() - waits0_ - checkpoint_waits_;
  summary_.pacing_waits = ctx_.pacing_waits() - pacing0_;
  flush();
  TrainState st;
  state_->read(&st, sizeof(st));
  summary_.final_scale = st.scale;
  summary_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  summary_.samples_per_second =
      summary_.seconds > 0 ? double(summary_.steps) * cfg_.batch * cfg_.grad_accum / summary_.seconds : 0;
  if (timed_steps_) {
    summary_.gpu_ms_per_step = gpu_ms_sum_ / timed_steps_;
    summary_.amp_ms_per_step = amp_ms_sum_ / timed_steps_;
    summary_.kernel_ms_per_step.clear();
    for (auto& [label, ms] : kernel_ms_sum_) summary_.kernel_ms_per_step.push_back({label, ms / timed_steps_});
    std::sort(summary_.kernel_ms_per_step.begin(), summary_.kernel_ms_per_step.end(),
              [](auto& a, auto& b) { return a.second > b.second; });
  }
  if (st.nonfinite_master != 0) {
    summary_.failed = true;
    summary_.failure = nonfinite_master_text(st);
  } else if (failed_seen_ || st.failed) {
    summary_.failed = true;
    char floor[32];
    std::snprintf(floor, sizeof floor, "%g", cfg_.scaler.min_scale);
    summary_.failure = std::string("the loss scale sat at min_loss_scale (") + floor + ") through " +
                       std::to_string(cfg_.scaler.fail_after) +
                       " consecutive overflows, up to step " + std::to_string(st.step) +
                       "; the gradients overflow fp16 even unscaled (lower the learning rate, clip, or "
                       "train in bf16/fp32)";
  } else if (!st.done) {
    summary_.failed = true;
    summary_.failure = "stopped after " + std::to_string(submitted_) + " steps with only " +
                       std::to_string(st.applied) + " of " + std::to_string(budget_) +
                       " updates applied: nearly every step overflowed";
  } else if (!cfg_.checkpoint_path.empty()) {
    save_checkpoint(cfg_.checkpoint_path);
  }
  return summary_;
}

// The update of step st.step - 1 made a master weight non-finite:
// step_control stopped the run at the next step (st.step did not advance)
// or the budget ended with that update (st.step advanced past it).
std::string Trainer::nonfinite_master_text(const TrainState& st) const {
  uint32_t index = ~st.nonfinite_master;
  std::string where = "parameter " + std::to_string(index);
  for (const auto& t : model_->tensors())
    if (index >= t.offset && index < t.offset + t.size)
      where = t.name + "[" + std::to_string(index - t.offset) + "]";
  std::string why = cfg_.scaler.policy == OverflowPolicy::Apply
                        ? " (--overflow-policy apply applied an overflowed gradient; use skip or retry)"
                        : " (the update overflowed fp32: lower the learning rate or clip)";
  return "the fp32 master weights became non-finite at step " + std::to_string(st.step - 1) + ": first " +
         where + why + "; training stopped";
}

void Trainer::set_scaler(const ScalerConfig& sc) {
  TrainConfig next = with_live_scaler(cfg_, sc);
  flush();
  TrainParams p;
  params_->read(&p, sizeof(p));
  set_scaler_params(p, sc);
  params_->write(&p, sizeof(p));
  TrainState st;
  state_->read(&st, sizeof(st));
  if (sc.mode != LossScaleMode::None) {
    st.scale = sc.mode == LossScaleMode::Static ? float(sc.initial_scale)
                                                : std::clamp(st.scale, p.min_scale, p.max_scale);
    st.grad_multiplier = st.scale / float(cfg_.grad_accum);
  }
  st.hysteresis_left = std::min(st.hysteresis_left, p.hysteresis);
  state_->write(&st, sizeof(st));
  cfg_ = next;
}

void Trainer::inject_overflow_next() {
  flush();
  TrainState st;
  state_->read(&st, sizeof(st));
  if (st.step >= max_attempts_) return;
  inject_bits_[st.step / 32] |= 1u << (st.step % 32);
  inject_mask_->write(inject_bits_);
}

double Trainer::evaluate(const HostData& data) {
  flush();
  const uint32_t B = cfg_.batch, C = model_->outputs();
  const size_t eb = format_bytes(fmt_);
  if (data.features != features_) throw Error("evaluate: feature count differs from the training data");
  auto xb = pack(fmt_, data.x);
  Buffer x(ctx_, xb.size());
  x.write(xb.data(), xb.size());
  uint32_t batches = div_up(data.count, B);
  Sequence seq(ctx_);
  if (loss_kind_ == LossKind::SoftmaxXent) {
    Buffer y(ctx_, size_t(data.count) * 4);
    y.write(data.labels);
    Buffer correct(ctx_, 4);
    seq.begin();
    seq.fill(correct, 0);
    for (uint32_t b = 0; b < batches; ++b) {
      uint32_t rows = std::min(B, data.count - b * B);
      seq.copy(x, *batch_x_, size_t(rows) * features_ * eb, size_t(b) * B * features_ * eb);
      seq.copy(y, *batch_y_, size_t(rows) * 4, size_t(b) * B * 4);
      model_->record_forward(seq, *batch_x_, rows);
      struct { uint32_t rows, classes; } push{rows, C};
      Kernel& k = ctx_.kernel({"accuracy." + ctx_.variant(fmt_), 3, sizeof(push), {}});
      seq.dispatch(k, {model_->output(), *batch_y_, correct}, push, {div_up(rows, 64)}, "accuracy");
    }
    seq.end();
    seq.run();
    uint32_t n = 0;
    correct.read(&n, 4);
    return double(n) / data.count;
  }
  auto yb = pack(fmt_, data.targets);
  Buffer y(ctx_, yb.size());
  y.write(yb.data(), yb.size());
  Buffer sums(ctx_, size_t(batches) * 4);
  seq.begin();
  for (uint32_t b = 0; b < batches; ++b) {
    uint32_t rows = std::min(B, data.count - b * B);
    seq.copy(x, *batch_x_, size_t(rows) * features_ * eb, size_t(b) * B * features_ * eb);
    seq.copy(y, *batch_y_, size_t(rows) * C * eb, size_t(b) * B * C * eb);
    model_->record_forward(seq, *batch_x_, rows);
    BufferView target(*batch_y_);
    ops::sum_squares(seq, fmt_, model_->output(), &target, rows * C, *reduce_scratch_, sums, b);
  }
  seq.end();
  seq.run();
  auto s = sums.read<float>();
  double total = 0;
  for (uint32_t b = 0; b < batches; ++b) total += s[b];
  return total / (double(data.count) * C);
}

void Trainer::save_checkpoint(const std::string& path) {
  flush();
  CheckpointFile ck;
  std::string meta = "model=" + model_->description() + " precision=" + format_name(fmt_) +
                     " params=" + std::to_string(model_->param_elements());
  ck.sections["meta"] = std::vector<uint8_t>(meta.begin(), meta.end());
  auto w = model_->read_master();
  ck.sections["master"] = bytes_of(w.data(), w.size());
  for (auto [name, buf] : {std::pair{"moment1", &model_->moment1()}, std::pair{"moment2", &model_->moment2()}}) {
    std::vector<uint8_t> b(buf->bytes());
    buf->read(b.data(), b.size());
    ck.sections[name] = std::move(b);
  }
  TrainState st;
  state_->read(&st, sizeof(st));
  ck.sections["state"] = bytes_of(&st, 1);
  uint64_t seed = cfg_.seed;
  ck.sections["seed"] = bytes_of(&seed, 1);
  save_checkpoint_file(path, ck);
}

void Trainer::load_checkpoint(const std::string& path) {
  flush();
  CheckpointFile ck = load_checkpoint_file(path);
  auto need = [&](const char* name, size_t bytes) -> const std::vector<uint8_t>& {
    auto it = ck.sections.find(name);
    if (it == ck.sections.end()) throw CheckpointError("checkpoint " + path + " has no '" + name + "' section");
    if (bytes && it->second.size() != bytes)
      throw CheckpointError("checkpoint " + path + ": section '" + name + "' has " +
                            std::to_string(it->second.size()) + " bytes, this run needs " + std::to_string(bytes));
    return it->second;
  };
  std::string meta(need("meta", 0).begin(), need("meta", 0).end());
  std::string want = "model=" + model_->description() + " precision=" + format_name(fmt_) +
                     " params=" + std::to_string(model_->param_elements());
  if (meta != want) throw CheckpointError("checkpoint " + path + " holds " + meta + "; this run is " + want);
  const auto& seed = need("seed", 8);
  uint64_t s;
  std::memcpy(&s, seed.data(), 8);
  if (s != cfg_.seed)
    throw CheckpointError("checkpoint " + path + " was trained with --seed " + std::to_string(s) +
                          "; resume with the same seed so the data order continues");
  const auto& master = need("master", size_t(model_->param_elements()) * 4);
  std::vector<float> w(model_->param_elements());
  std::memcpy(w.data(), master.data(), master.size());
  model_->write_master(w);
  const auto& m1 = need("moment1", model_->moment1().bytes());
  model_->moment1().write(m1.data(), m1.size());
  const auto& m2 = need("moment2", model_->moment2().bytes());
  model_->moment2().write(m2.data(), m2.size());
  TrainState st;
  std::memcpy(&st, need("state", sizeof(st)).data(), sizeof(st));
  st.done = st.applied >= budget_ ? 1u : 0u;  // a longer run may continue a finished one
  st.replay = 0;                              // replays count from this trainer's start
  state_->write(&st, sizeof(st));
  submitted_ = drained_ = 0;
  stop_seen_ = failed_seen_ = false;
  summary_.applied = st.applied;
}

}  // namespace vkamp::train
