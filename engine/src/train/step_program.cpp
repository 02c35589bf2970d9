#include "vkamp/train/step_program.hpp"

#include <algorithm>
#include <cstddef>
#include <string>

#include "vkamp/gpu_abi/amp_check.h"
#include "vkamp/gpu_abi/grad_accumulate.h"
#include "vkamp/gpu_abi/inject_overflow.h"
#include "vkamp/gpu_abi/optimizer.h"
#include "vkamp/gpu_abi/step_control.h"
#include "vkamp/error.hpp"
#include "vkamp/ops/losses.hpp"
#include "vkamp/ops/reduce.hpp"

namespace vkamp::train {

StepProgram::StepProgram(Context& ctx, const config::TrainConfig& cfg, LossKind loss, Model& model, BatchFeeder& feeder,
                         StepParams& params, StepRing& ring, uint32_t max_attempts, uint32_t rank, uint32_t ranks)
    : ctx_(ctx), fmt_(cfg.precision), loss_(loss), batch_(cfg.batch), micro_batches_(cfg.grad_accum),
      max_attempts_(max_attempts), accumulated_(cfg.grad_accum > 1 || ranks > 1), optimizer_(cfg.optimizer.kind),
      model_(model), feeder_(feeder),
      params_(params), ring_(ring) {
  const auto& tensors = model.tensors();
  const uint32_t total = model.param_elements(), B = batch_, M = micro_batches_;
  model.executor().set_micro_batches(M);  // BatchNorm stages each micro-batch's statistics
  // Dropout draws from the run's seed and the step number on the GPU (which
  // a checkpoint keeps: a resumed run draws the same), per rank.
  model.executor().set_random_source(
      {cfg.seed, &params.state(), uint32_t(offsetof(TrainState, step) / 4), rank});
  partials_ = partials_for(total);
  partial_sq_ = std::make_unique<Buffer>(ctx, partials_ * 8);  // (s, k) per partial, amp_check.comp
  partial_bad_ = std::make_unique<Buffer>(ctx, partials_ * 4);
  // With micro-batches (or ranks to all-reduce with), the gradients are
  // summed here in fp32; otherwise the 16-bit gradient is read directly and
  // this is a placeholder binding.
  grad_sum_ = std::make_unique<Buffer>(ctx, accumulated_ ? size_t(total) * 4 : 4);
  loss_values_ = std::make_unique<Buffer>(ctx, M * 4);
  row_loss_ = std::make_unique<Buffer>(ctx, ops::softmax_xent_scratch_bytes(B * model.positions()));
  reduce_scratch_ = std::make_unique<Buffer>(ctx, ops::reduce_scratch_bytes(B * model.outputs()));
  hist_ = std::make_unique<Buffer>(ctx, tensors.size() * kHistBins * 4);
  hist_->fill(0);
  tensor_stats_ = std::make_unique<Buffer>(ctx, tensors.size() * sizeof(TensorStats));
  tensor_stats_->fill(0);
  std::vector<uint32_t> ranges;
  for (auto& t : tensors) {
    ranges.push_back(t.offset);
    ranges.push_back(t.offset + t.size);
  }
  tensor_ranges_ = std::make_unique<Buffer>(ctx, ranges.size() * 4);
  tensor_ranges_->write(ranges);
  // Fault injection: one bit per step, from --inject-overflow and the app's
  // button. The pass is recorded only when a step is marked here, or once
  // the button first arms it (inject_overflow_at): otherwise a step has no
  // injection pass at all, live injection allowed or not.
  const bool injects_here = cfg.inject_rank < 0 || uint32_t(cfg.inject_rank) == rank;
  injects_ = injects_here && !cfg.inject_overflow.empty();
  live_ = cfg.live_fault_injection;
  if (injects_ || live_) {
    inject_bits_.assign((max_attempts_ + 31) / 32, 0);
    for (auto r : injects_here ? cfg.inject_overflow : std::vector<config::StepRange>{})
      for (uint64_t s = r.first; s <= r.last && s < max_attempts_; ++s) inject_bits_[s / 32] |= 1u << (s % 32);
    inject_mask_ = std::make_unique<Buffer>(ctx, inject_bits_.size() * 4);
    inject_mask_->write(inject_bits_);
  }
  // Per-layer loss scaling: the groups' scales, and the loss gradient's
  // starting multiplier from the output group's scale.
  if (cfg.scaler.mode == config::LossScaleMode::PerLayer) {
    layer_scales_ = std::make_unique<LayerScales>(ctx, model, cfg.scaler);
    TrainState st = params.read_state();
    st.scale = layer_scales_->output_scale();
    st.grad_multiplier = grad_multiplier(st.scale, M);
    params.write_state(st);
  }
  decay_runs_ = decay_runs(tensors, total, cfg.optimizer.weight_decay > 0 && !cfg.optimizer.decay_vectors,
                           layer_scales_ ? layer_scales_->tensor_group() : std::vector<uint32_t>{});
}

// One run of the whole buffer, or (decaying matrices only, or per-layer
// scaling) one per stretch of tensors that decay alike and share a scale
// group, each up to where the next run starts, so the padding between
// tensors is covered too.
std::vector<StepProgram::DecayRun> StepProgram::decay_runs(const std::vector<graph::ParamTensor>& tensors, uint32_t total,
                                                           bool matrices_only, const std::vector<uint32_t>& tensor_group) {
  if ((!matrices_only && tensor_group.empty()) || tensors.empty()) return {{0, total, true}};
  std::vector<DecayRun> runs;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const graph::ParamTensor& t = tensors[i];
    const bool decay = !matrices_only || t.matrix;
    const uint32_t group = tensor_group.empty() ? shader::kNoScaleGroup : tensor_group[i];
    if (!runs.empty() && runs.back().decay == decay && runs.back().group == group) continue;
    if (!runs.empty()) runs.back().end = t.offset;
    runs.push_back({runs.empty() ? 0 : t.offset, total, decay, group});
  }
  return runs;
}

// About 16 gradients per invocation: enough workgroups to fill a GPU for
// big models, few enough that the per-workgroup reductions (barriers) stay
// cheap; on lavapipe 1 per invocation made this pass 20% of a step.
uint32_t StepProgram::partials_for(uint32_t params) { return std::max(1u, std::min(div_up(params, 4096), 1024u)); }

bool StepProgram::inject_overflow_at(uint32_t step) {
  if (!injects_ && !live_)
    throw Error("live fault injection is off: set TrainConfig::live_fault_injection before training");
  if (step >= max_attempts_) return false;
  inject_bits_[step / 32] |= 1u << (step % 32);
  inject_mask_->write(inject_bits_);
  const bool armed_now = !injects_;
  injects_ = true;
  return armed_now;
}

void StepProgram::record(Sequence& seq) {
  seq.begin();
  for (uint32_t m = 0; m < micro_batches_; ++m) record_micro_batch(seq, m);
  record_decision_and_update(seq);
  seq.end();
}

void StepProgram::record_micro_batches(Sequence& seq) {
  seq.begin();
  // --sync-bn cuts the recording at every BatchNorm (StepRing::cut): each
  // micro-batch continues in the sequence the last one ended in.
  Sequence* s = &seq;
  for (uint32_t m = 0; m < micro_batches_; ++m) s = &record_micro_batch(*s, m);
  s->end();
}

void StepProgram::record_update(Sequence& seq) {
  seq.begin();
  record_decision_and_update(seq);
  seq.end();
}

void StepProgram::record_loss(Sequence& seq, uint32_t m) {
  const uint32_t B = batch_, C = model_.outputs();
  BufferView scale_view(params_.state(), offsetof(TrainState, grad_multiplier), sizeof(float));
  Buffer& y = feeder_.batch_y();
  if (loss_ == LossKind::SoftmaxXent) {
    // A language model's loss is the mean over every position of every
    // example that is a target (a prompt's are not).
    const uint32_t rows = B * model_.positions(), classes = model_.classes();
    if (LogitChunks* chunks = model_.logit_chunks())  // the head, its loss and dh a chunk of rows at a time
      return chunks->record_loss(seq, model_.head_weight(), model_.hidden(), y, scale_view, *row_loss_,
                                 *loss_values_, model_.hidden_grad(), rows, m);
    ops::softmax_xent_forward(seq, fmt_, model_.output(), y, *row_loss_, *loss_values_, rows, classes, m);
    ops::softmax_xent_backward(seq, fmt_, model_.output(), y, scale_view, *row_loss_, model_.doutput(), rows, classes);
  } else {
    ops::mse_forward(seq, fmt_, model_.output(), y, *reduce_scratch_, *loss_values_, B * C, m);
    ops::mse_backward(seq, fmt_, model_.output(), y, scale_view, model_.doutput(), B * C);
  }
}

Sequence& StepProgram::record_micro_batch(Sequence& first, uint32_t m) {
  const uint32_t total = model_.param_elements();
  feeder_.record_gather(first, params_.state(), m);
  Sequence& forwarded = model_.record_forward(first, feeder_.batch_x(), batch_, graph::ForwardMode::Training, m);
  record_loss(forwarded, m);
  // Every micro-batch writes a fresh 16-bit gradient (where underflow
  // happens, as with one batch); with M > 1 it is then added into the fp32
  // sum, so the sum is rounded to fp32, not to the 16-bit format M times.
  Sequence& seq = model_.record_backward(forwarded, feeder_.batch_x(), batch_, false);
  // Injected into the first micro-batch's 16-bit gradient, so the inf must
  // survive the accumulation of the others to be caught.
  if (m == 0 && injects_) {
    const shader::InjectOverflowPush push{max_attempts_, model_.tensors()[0].offset};
    auto k = ctx_.kernel<shader::InjectOverflowShader>(fmt_);
    seq.dispatch(k, {params_.state(), *inject_mask_, model_.grads()}, push, {1}, "inject_overflow");
  }
  if (accumulated_) {
    const shader::GradAccumulatePush ap{total, m == 0 ? 1u : 0u};
    auto k = ctx_.kernel<shader::GradAccumulateShader>(fmt_);
    seq.dispatch(k, {model_.grads(), *grad_sum_}, ap, {std::min(div_up(total, 256), 65535u)}, "grad_accumulate");
  }
  return seq;
}

void StepProgram::record_decision_and_update(Sequence& seq) {
  const uint32_t total = model_.param_elements();
  Buffer &state = params_.state(), &prm = params_.params();
  const shader::AmpCheckPush np{total};
  const uint32_t accumulated = accumulated_ ? 1 : 0;  // ACCUMULATED: read the fp32 sum
  // PER_LAYER: each tensor's statistics at its group's scale. Its two
  // bindings are read only by per-layer runs; state fills them otherwise.
  auto amp = ctx_.kernel<shader::AmpCheckShader>(fmt_, {accumulated, layer_scales_ ? 1u : 0u});
  Buffer& amp_layers = layer_scales_ ? layer_scales_->layers() : state;
  Buffer& amp_groups = layer_scales_ ? layer_scales_->tensor_groups() : state;
  seq.dispatch(amp, {state, prm, model_.grads(), *tensor_ranges_, *partial_sq_, *partial_bad_, *hist_, *grad_sum_,
                     *tensor_stats_, amp_layers, amp_groups},
               np, {partials_}, "amp_check");
  auto ctl = ctx_.kernel<shader::StepControlShader>();
  seq.dispatch(ctl, {state, prm, *partial_sq_, *partial_bad_, *loss_values_, *hist_, ring_.histograms(),
                     ring_.records(), params_.bias_corrections(), params_.lr_table(), *tensor_stats_,
                     ring_.tensor_stats(), params_.auto_scale()},
               {1}, "step_control");
  // Per-layer loss scaling: each group's next scale from the per-tensor
  // statistics step_control just published (and the 1/S_g this step's
  // update divides by).
  if (layer_scales_) layer_scales_->record_update(seq, state, prm, ring_.tensor_stats(), ring_.records());
  // The optimizer's binding 8 is read only by per-layer runs; state fills it otherwise.
  Buffer& layers = layer_scales_ ? layer_scales_->layers() : state;
  shader::OptimizerPush op{};
  auto optk = ctx_.kernel<shader::OptimizerShader>(fmt_, {optimizer_code(optimizer_), accumulated});
  for (const DecayRun& run : decay_runs_) {
    op = {run.first, run.end - run.first, run.decay ? 1u : 0u, run.group};
    seq.dispatch(optk, {state, prm, model_.grads(), model_.master(), model_.moment1(), model_.moment2(),
                        model_.working(), *grad_sum_, layers},
                 op, {std::min(div_up(op.n, 256), 65535u)}, "optimizer");
  }
  // BatchNorm's running statistics take the step's M micro-batch statistics
  // on the same applied flag as the weights: a skipped attempt stages its
  // statistics but commits nothing, and a retry's forwards overwrite them,
  // so only the accepted attempt reaches the running buffers.
  model_.record_commit(seq, state, batch_);
}

}  // namespace vkamp::train
