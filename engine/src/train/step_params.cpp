#include "vkamp/train/step_params.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <tuple>

#include "vkamp/gpu_abi/step_codes.h"

namespace vkamp::train {
namespace {

// Suggest is dynamic scaling on the GPU: the application makes the suggestion.
uint32_t scale_mode_code(config::LossScaleMode m) {
  switch (m) {
    case config::LossScaleMode::None: return kScaleNone;
    case config::LossScaleMode::Static: return kScaleStatic;
    case config::LossScaleMode::Auto: return kScaleAuto;
    case config::LossScaleMode::PerLayer: return kScalePerLayer;
    case config::LossScaleMode::Dynamic:
    case config::LossScaleMode::Suggest: break;
  }
  return kScaleDynamic;
}

uint32_t policy_code(config::OverflowPolicy p) {
  return p == config::OverflowPolicy::Skip ? kPolicySkip : p == config::OverflowPolicy::Apply ? kPolicyApply : kPolicyRetry;
}

// The loss-scaling part of TrainParams: the part the app may change live.
void set_scaler_params(TrainParams& p, const config::ScalerConfig& sc) {
  p.scale_mode = scale_mode_code(sc.mode);
  p.growth_factor = float(sc.growth_factor);
  p.backoff_factor = float(sc.backoff_factor);
  p.steps_per_increase = sc.steps_per_increase;
  p.min_loss_scale = float(sc.min_loss_scale);
  p.max_loss_scale = float(std::min(sc.max_loss_scale, 3.4028234663852886e38));
  p.hysteresis = std::max(1u, sc.hysteresis);
  p.consecutive_hysteresis = sc.consecutive_hysteresis ? 1 : 0;
  p.policy = policy_code(sc.policy);
  p.max_retries = sc.max_retries;
  p.fail_after_overflows = sc.fail_after_overflows;
  // --loss-scale auto
  p.auto_warmup = sc.auto_warmup;
  p.auto_recheck = sc.auto_recheck;
  p.auto_overflow_tolerance = sc.auto_overflow_tolerance;
  p.underflow_target = float(sc.underflow_target);
  std::tie(p.scale_exp_lo, p.scale_exp_hi) = scale_exponent_range(sc);
}

void set_optimizer_params(TrainParams& p, const config::OptimizerConfig& oc) {
  p.optimizer = optimizer_code(oc.kind);
  p.base_lr = float(oc.lr);
  p.momentum = float(oc.momentum);
  p.beta1 = float(oc.beta1);
  p.beta2 = float(oc.beta2);
  p.eps = float(oc.eps);
  p.weight_decay = float(oc.weight_decay);
}

TrainState initial_state(const config::TrainConfig& cfg, const TrainParams& p) {
  TrainState st{};
  st.scale = cfg.scaler.mode == config::LossScaleMode::None ? 1.0f : float(cfg.scaler.initial_loss_scale);
  st.grad_multiplier = grad_multiplier(st.scale, cfg.grad_accum);
  st.hysteresis_left = p.hysteresis;
  return st;
}

}  // namespace

FormatExponents format_exponents(Format f) {
  return {int(std::lround(std::log2(format_min_subnormal(f)))), int(std::lround(std::log2(format_min_normal(f)))),
          int(std::floor(std::log2(format_max(f))))};
}

std::pair<int, int> scale_exponent_range(const config::ScalerConfig& sc) {
  const int lo = int(std::ceil(std::log2(std::max(sc.min_loss_scale, 1e-38))));
  const int hi = int(std::floor(std::log2(std::min(sc.max_loss_scale, 3.4028234663852886e38))));
  return {std::clamp(lo, -126, 127), std::clamp(hi, -126, 127)};
}

uint32_t optimizer_code(config::OptimizerKind k) {
  return k == config::OptimizerKind::SGD ? kOptimizerSgd : k == config::OptimizerKind::Adam ? kOptimizerAdam : kOptimizerAdamW;
}

TrainParams train_params(const config::TrainConfig& cfg, const StepShape& shape) {
  TrainParams p{};
  set_scaler_params(p, cfg.scaler);
  p.budget = shape.budget;
  p.micro_batches = cfg.grad_accum;
  p.histogram_interval = config::histogram_interval_for(cfg.scaler);
  const FormatExponents fe = format_exponents(cfg.precision);
  p.format_normal_exp = fe.normal_exp;
  p.format_top_exp = fe.top_exp;
  set_optimizer_params(p, cfg.optimizer);
  p.max_norm = float(cfg.clip.max_norm);
  p.max_value = float(cfg.clip.max_value);
  p.ring_size = shape.ring_size;
  p.hist_ring_size = shape.hist_ring_size;
  p.tensors = shape.tensors;
  p.partials = shape.partials;
  return p;
}

// In double from the fp32 betas the moment updates use, so that each moment
// is divided by exactly the sum of its weights (1 - b) b^(t-k), rounded once.
std::vector<float> bias_correction_table(const config::OptimizerConfig& oc, uint32_t budget) {
  std::vector<float> table;
  if (oc.kind == config::OptimizerKind::SGD) return table;
  const double b1 = float(oc.beta1), b2 = float(oc.beta2);
  for (uint32_t t = 1; t <= budget; ++t) {
    const float c1 = float(1 - std::pow(b1, t)), c2 = float(1 - std::pow(b2, t));
    if (c1 == 1.0f && c2 == 1.0f) break;
    table.push_back(c1);
    table.push_back(c2);
  }
  return table;
}

// In double from the fp32 rate and gamma, rounded once per entry: the GPU
// reads the rate, never computes it, so every driver gives the same one.
std::vector<float> lr_schedule_table(const config::OptimizerConfig& oc, uint32_t budget) {
  const double lr = float(oc.lr), gamma = float(oc.gamma), warmup = oc.warmup_steps;
  if (oc.schedule == config::LrSchedule::Constant || budget == 0) return {float(lr)};
  std::vector<float> table(budget);
  for (uint32_t k = 0; k < budget; ++k) {
    double r = lr;
    if (oc.schedule == config::LrSchedule::Step) {
      r = lr * std::pow(gamma, double(k / std::max(oc.step_size, 1u)));
    } else if (k < oc.warmup_steps) {
      r = lr * (k + 1) / warmup;
    } else {
      // Half a cosine from lr towards 0 over the updates after the warmup.
      const double span = std::max(budget, oc.warmup_steps + 1) - warmup;
      r = lr * 0.5 * (1 + std::cos(std::numbers::pi * std::min((k - warmup) / span, 1.0)));
    }
    table[k] = float(r);
  }
  return table;
}

StepParams::StepParams(Context& ctx, const config::TrainConfig& cfg, const StepShape& shape) {
  TrainParams p = train_params(cfg, shape);
  const std::vector<float> table = bias_correction_table(cfg.optimizer, shape.budget);
  p.bias_table_len = uint32_t(table.size() / 2);
  bias_correction_ = std::make_unique<Buffer>(ctx, std::max<size_t>(table.size(), 2) * 4);
  if (!table.empty()) bias_correction_->write(table);
  const std::vector<float> rates = lr_schedule_table(cfg.optimizer, shape.budget);
  p.lr_table_len = uint32_t(rates.size());
  lr_table_ = std::make_unique<Buffer>(ctx, rates.size() * 4);
  lr_table_->write(rates);
  params_ = std::make_unique<Buffer>(ctx, sizeof(p));
  params_->write(&p, sizeof(p));
  const TrainState st = initial_state(cfg, p);
  state_ = std::make_unique<Buffer>(ctx, sizeof(st));
  state_->write(&st, sizeof(st));
  auto_scale_ = std::make_unique<Buffer>(ctx, sizeof(AutoScaleState));
  auto_scale_->fill(0);
}

AutoScaleState StepParams::read_auto_scale() {
  AutoScaleState a;
  auto_scale_->read(&a, sizeof(a));
  return a;
}

void StepParams::write_auto_scale(const AutoScaleState& a) { auto_scale_->write(&a, sizeof(a)); }

TrainState StepParams::read_state() {
  TrainState st;
  state_->read(&st, sizeof(st));
  return st;
}

void StepParams::write_state(const TrainState& st) { state_->write(&st, sizeof(st)); }

void StepParams::set_scaler(const config::ScalerConfig& sc, uint32_t grad_accum) {
  TrainParams p;
  params_->read(&p, sizeof(p));
  set_scaler_params(p, sc);
  params_->write(&p, sizeof(p));
  TrainState st = read_state();
  // Per-layer scaling: st.scale is the output layer's scale, which
  // layer_scale.comp owns (and bounds by the new limits at its next update).
  if (sc.mode != config::LossScaleMode::None && sc.mode != config::LossScaleMode::PerLayer) {
    st.scale = sc.mode == config::LossScaleMode::Static ? float(sc.initial_loss_scale)
                                                : std::clamp(st.scale, p.min_loss_scale, p.max_loss_scale);
    st.grad_multiplier = grad_multiplier(st.scale, grad_accum);
  }
  st.hysteresis_left = std::min(st.hysteresis_left, p.hysteresis);
  write_state(st);
}

}  // namespace vkamp::train
