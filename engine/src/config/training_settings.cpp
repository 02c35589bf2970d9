// The trainer's settings, one row each, in --help order. A new knob is a
// field in TrainConfig (config.hpp) and a row here; the command line, YAML
// files, --help and validate() all read this table.
#include "vkamp/config/setting.hpp"

namespace vkamp::config {
namespace {

const EnumNames<LossScaleMode> kScaleModeNames = {
    {"none", LossScaleMode::None},       {"static", LossScaleMode::Static}, {"dynamic", LossScaleMode::Dynamic},
    {"suggest", LossScaleMode::Suggest}, {"auto", LossScaleMode::Auto},     {"per_layer", LossScaleMode::PerLayer}};
const EnumNames<OverflowPolicy> kPolicyNames = {
    {"skip", OverflowPolicy::Skip}, {"apply", OverflowPolicy::Apply}, {"retry", OverflowPolicy::Retry}};
const EnumNames<OptimizerKind> kOptimizerNames = {
    {"sgd", OptimizerKind::SGD}, {"adam", OptimizerKind::Adam}, {"adamw", OptimizerKind::AdamW}};
const EnumNames<LrSchedule> kScheduleNames = {
    {"constant", LrSchedule::Constant}, {"step", LrSchedule::Step}, {"cosine", LrSchedule::Cosine}};
const EnumNames<DataResidency> kResidencyNames = {
    {"auto", DataResidency::Auto}, {"always", DataResidency::Always}, {"never", DataResidency::Never}};

using Row = Setting<TrainConfig>;

Row precision_row() {
  Row s = row<TrainConfig>(
      "precision", {kGeneralGroup, "P", "fp32 | float16 | bfloat16 | cbfloat16 (also fp16, bf16, cb16)"});
  s.parse = [](TrainConfig& c, const std::string& v, const std::string& l) {
    auto f = parse_format(lower(v));
    if (!f) fail(l, "unknown precision '" + v + "' (expected fp32 | float16 | bfloat16 | cbfloat16)");
    c.precision = *f;
  };
  s.show = [](const TrainConfig& c) { return std::string(format_name(c.precision)); };
  return s;
}

// Cerebras's name for the 16-bit precisions; fp32 is not one of them.
Row fp16_type_row() {
  Row s = row<TrainConfig>("fp16_type",
                           {kGeneralGroup, "T", "Cerebras name: float16 | bfloat16 | cbfloat16 (sets --precision)"});
  s.parse = [](TrainConfig& c, const std::string& v, const std::string& l) {
    const std::string t = lower(v);
    if (t == "float16") c.precision = Format::F16;
    else if (t == "bfloat16") c.precision = Format::BF16;
    else if (t == "cbfloat16") c.precision = Format::CB16;
    else
      fail(l, "unknown value '" + v +
                  "' (expected float16 | bfloat16 | cbfloat16; for full precision use precision: fp32)");
  };
  s.show = [](const TrainConfig&) { return std::string(); };
  return s;
}

// O0 | O1 | O2 | O3 (graph/precision_plan.hpp); a bad value names the
// closest level.
Row amp_level_row() {
  Row s = row<TrainConfig>(
      "amp_level",
      {kGeneralGroup, "L",
       "O0 (everything fp32) | O1 (GEMMs, convolutions and attention in --precision, every other op in fp32) | "
       "O2 (activations and working weights in --precision) | O3 (O2 plus BatchNorm's weight, bias and batch "
       "statistics in --precision, its running buffers fp32; every other op as O2)"});
  s.parse = [](TrainConfig& c, const std::string& v, const std::string& l) {
    auto level = parse_amp_level(trim(v));
    if (!level) {
      const std::string hint = closest_match(lower(trim(v)), {"o0", "o1", "o2", "o3"});
      fail(l, "unknown level '" + v + "' (expected O0 | O1 | O2 | O3" +
                  (hint.empty() ? std::string() : "; did you mean " + std::string(1, 'O') + hint.substr(1) + "?") +
                  ")");
    }
    c.amp_level = *level;
  };
  s.show = [](const TrainConfig& c) { return std::string(amp_level_name(c.amp_level)); };
  return s;
}

// Cerebras's precision_opt_level, mapped onto the levels by vkamp (Cerebras
// tunes its hardware's accumulations with it; vkamp always accumulates in
// fp32): 0 -> O1, 1 -> O2, 2 -> O3.
Row precision_opt_level_row() {
  Row s = row<TrainConfig>(
      "precision_opt_level", {kGeneralGroup, "N", "Cerebras name: 0 | 1 | 2 (sets --amp-level O1 | O2 | O3)"});
  s.parse = [](TrainConfig& c, const std::string& v, const std::string& l) {
    const std::string t = trim(v);
    if (t == "0") c.amp_level = AmpLevel::O1;
    else if (t == "1") c.amp_level = AmpLevel::O2;
    else if (t == "2") c.amp_level = AmpLevel::O3;
    else
      fail(l, "unknown value '" + v + "' (expected 0 | 1 | 2: vkamp runs them as --amp-level O1 | O2 | O3" +
                  (parse_amp_level(t) ? "; or give amp_level: " + t : std::string()) + ")");
  };
  s.show = [](const TrainConfig&) { return std::string(); };
  return s;
}

// dynamic | none | suggest | auto | a fixed scale: the mode and, when
// fixed, the scale.
Row loss_scaling_factor_row() {
  Row s = row<TrainConfig>(
      "loss_scaling_factor",
      {kScalingGroup, "S",
       "dynamic | none | a fixed positive scale | suggest (after --suggest-steps dynamic updates, print the "
       "power of two the gradient histograms call for, and exit 0 without saving weights) | auto (the same "
       "choice after --auto-warmup dynamic steps, re-checked every --auto-recheck) | per-layer (one adaptive scale "
       "per layer of an MLP-like chain) (= loss_scaling_factor)"});
  s.flag = "--loss-scale";
  s.flag_alias_help = "Cerebras name for --loss-scale";
  s.parse = [](TrainConfig& c, const std::string& v, const std::string& l) {
    std::string t = lower(v);
    if (t == "per-layer") t = "per_layer";  // the flag's spelling of the YAML value
    if (t == "dynamic" || t == "none" || t == "suggest" || t == "auto" || t == "per_layer") {
      c.scaler.mode = parse_name(kScaleModeNames, t, l);
      return;
    }
    double x = 0;
    try {
      x = parse_double(v, l);
    } catch (const ConfigError&) {
      fail(l, "'" + v + "' is not dynamic, none, suggest, auto, per-layer or a positive number");
    }
    if (!(x > 0)) fail(l, "a static loss scale must be > 0 (got " + v + ")");
    c.scaler.mode = LossScaleMode::Static;
    c.scaler.initial_loss_scale = x;
  };
  s.show = [](const TrainConfig& c) { return std::string(scale_mode_name(c.scaler.mode)); };
  // Checked before initial_loss_scale so that a static run's bad scale names --loss-scale.
  s.check = [](const TrainConfig& c) {
    if (c.scaler.mode == LossScaleMode::Static && !Range::above(0).contains(c.scaler.initial_loss_scale))
      throw ConfigError("--loss-scale (loss_scaling_factor): the loss scale must be a finite number > 0, got " +
                        fmt(c.scaler.initial_loss_scale));
  };
  return s;
}

Row inject_overflow_row() {
  Row s = row<TrainConfig>(
      "inject_overflow",
      {kTestingGroup, "LIST", "write an inf into a gradient at these optimizer steps, e.g. 120,300-305"});
  s.parse = [](TrainConfig& c, const std::string& v, const std::string& l) {
    try {
      c.inject_overflow = parse_step_ranges(v);
    } catch (const ConfigError& e) {
      fail(l, e.what());
    }
  };
  s.show = [](const TrainConfig& c) {
    std::string list;
    for (const StepRange& r : c.inject_overflow)
      list += (list.empty() ? "" : ",") + std::to_string(r.first) +
              (r.last == r.first ? "" : "-" + std::to_string(r.last));
    return list.empty() ? std::string("none") : list;
  };
  s.check = [](const TrainConfig& c) {
    for (const StepRange& r : c.inject_overflow)
      if (r.last < r.first)
        throw ConfigError(names("inject_overflow") + ": range " + std::to_string(r.first) + "-" +
                          std::to_string(r.last) + " ends before it starts");
  };
  return s;
}

// "all" (-1) or one rank's number.
Row inject_rank_row() {
  Row s = row<TrainConfig>(
      "inject_rank", {kTestingGroup, "R", "under mpirun: the rank whose gradients --inject-overflow poisons (all | R)"});
  s.parse = [](TrainConfig& c, const std::string& v, const std::string& l) {
    if (lower(trim(v)) == "all") {
      c.inject_rank = -1;
      return;
    }
    const uint32_t r = parse_u32(v, l);
    if (r > uint32_t(INT32_MAX)) fail(l, "'" + v + "' is not a rank");
    c.inject_rank = int32_t(r);
  };
  s.show = [](const TrainConfig& c) { return c.inject_rank < 0 ? std::string("all") : std::to_string(c.inject_rank); };
  return s;
}

std::vector<Row> scaling_rows() {
  using T = TrainConfig;
  const Range positive = Range::above(0);
  Row hysteresis_refill = toggle<T>(
      "consecutive_hysteresis",
      {kScalingGroup, "", "every clean step refills the hysteresis (DeepSpeed), not only a growth"},
      VKAMP_FIELD(scaler.consecutive_hysteresis));
  // PyTorch GradScaler's name for a knob, accepted as it is: one knob, one
  // name in vkamp, that one as an alias.
  auto also = [](Row r, const char* alias) {
    r.aliases.push_back(alias);
    return r;
  };
  std::vector<Row> rows = {
      loss_scaling_factor_row(),
      also(real<T>("initial_loss_scale", {kScalingGroup, "X", "starting scale of dynamic scaling"},
              VKAMP_FIELD(scaler.initial_loss_scale), positive), "initial_scale"),
      also(count<T>("steps_per_increase", {kScalingGroup, "N", "clean steps before the scale grows"},
               VKAMP_FIELD(scaler.steps_per_increase), 1), "growth_interval"),
      real<T>("growth_factor", {kScalingGroup, "X", "scale multiplier on growth (> 1)"},
              VKAMP_FIELD(scaler.growth_factor), Range::above(1)),
      real<T>("backoff_factor", {kScalingGroup, "X", "scale multiplier on an overflow, in (0, 1)"},
              VKAMP_FIELD(scaler.backoff_factor), Range::between(0, 1)),
      also(real<T>("min_loss_scale", {kScalingGroup, "X", "the scale never goes below this"},
              VKAMP_FIELD(scaler.min_loss_scale), positive), "min_scale"),
      also(real<T>("max_loss_scale", {kScalingGroup, "X", "the scale never grows above this", " (fp32 max)"},
              VKAMP_FIELD(scaler.max_loss_scale), positive), "max_scale"),
      count<T>("hysteresis", {kScalingGroup, "N", "overflows tolerated before a backoff (DeepSpeed)"},
               VKAMP_FIELD(scaler.hysteresis), 1),
      hysteresis_refill,
      choice<T>("overflow_policy",
                {kScalingGroup, "P", "on an overflowed step: skip | apply | retry (recompute at the lower scale)"},
                VKAMP_FIELD(scaler.policy), kPolicyNames),
      count<T>("max_retries", {kScalingGroup, "N", "retry policy: recomputations of one batch"},
               VKAMP_FIELD(scaler.max_retries)),
      also(count<T>("fail_after_overflows",
               {kScalingGroup, "N", "stop after N consecutive overflows at the minimum scale (0 = never)"},
               VKAMP_FIELD(scaler.fail_after_overflows)), "fail_after"),
      count<T>("histogram_interval", {kScalingGroup, "N", "gradient exponent histograms every N steps (0 = never)"},
               VKAMP_FIELD(scaler.histogram_interval)),
      // --loss-scale suggest and auto (gpu_abi/scale_choice.h).
      real<T>("underflow_target",
              {kScalingGroup, "X",
               "suggest and auto: the fraction of gradient elements allowed below the format's smallest normal at "
               "the chosen scale (flushed to zero or subnormal), in [0, 1) (0.001 = 0.1%)"},
              VKAMP_FIELD(scaler.underflow_target), Range::from_to_below(0, 1)),
      count<T>("suggest_steps", {kScalingGroup, "N", "suggest: updates at the dynamic scale before the suggestion"},
               VKAMP_FIELD(scaler.suggest_steps), 1),
      count<T>("auto_warmup", {kScalingGroup, "N", "auto: steps of dynamic scaling before the first choice"},
               VKAMP_FIELD(scaler.auto_warmup), 1),
      count<T>("auto_recheck", {kScalingGroup, "N", "auto: steps between re-checks of the scale"},
               VKAMP_FIELD(scaler.auto_recheck), 1),
      count<T>("auto_overflow_tolerance",
               {kScalingGroup, "N",
                "auto: overflowed steps a re-check window takes; one more re-checks at once, a doubling lower"},
               VKAMP_FIELD(scaler.auto_overflow_tolerance)),
      real<T>("max_gradient_norm",
              {kClippingGroup, "X", "clip the global L2 norm of the gradients to X (0 = off)"},
              VKAMP_FIELD(clip.max_norm), Range::at_least(0)),
      real<T>("max_gradient_value", {kClippingGroup, "X", "clamp every gradient element to [-X, X] (0 = off)"},
              VKAMP_FIELD(clip.max_value), Range::at_least(0)),
  };
  return rows;
}

std::vector<Row> optimizer_rows() {
  using T = TrainConfig;
  const Range decay = Range::from_to_below(0, 1);
  Row lr = real<T>("lr", {kOptimizerGroup, "X", "learning rate"}, VKAMP_FIELD(optimizer.lr), Range::at_least(0));
  lr.aliases = {"learning_rate"};
  return {
      choice<T>("optimizer", {kOptimizerGroup, "O", "sgd | adam | adamw"}, VKAMP_FIELD(optimizer.kind),
                kOptimizerNames),
      lr,
      real<T>("momentum", {kOptimizerGroup, "X", "SGD momentum, in [0, 1) (0 = plain SGD)"},
              VKAMP_FIELD(optimizer.momentum), decay),
      real<T>("beta1", {kOptimizerGroup, "X", "Adam first-moment decay, in [0, 1)"}, VKAMP_FIELD(optimizer.beta1),
              decay),
      real<T>("beta2", {kOptimizerGroup, "X", "Adam second-moment decay, in [0, 1)"}, VKAMP_FIELD(optimizer.beta2),
              decay),
      real<T>("eps", {kOptimizerGroup, "X", "Adam epsilon (> 0)"}, VKAMP_FIELD(optimizer.eps), Range::above(0)),
      real<T>("weight_decay", {kOptimizerGroup, "X", "weight decay (decoupled for adamw)"},
              VKAMP_FIELD(optimizer.weight_decay), Range::at_least(0)),
      toggle<T>("decay_vectors",
                {kOptimizerGroup, "",
                 "weight decay also on biases and norm gains (--no-decay-vectors: matrices only, as nanoGPT)"},
                VKAMP_FIELD(optimizer.decay_vectors)),
      choice<T>("lr_schedule", {kOptimizerGroup, "S", "constant | step | cosine"}, VKAMP_FIELD(optimizer.schedule),
                kScheduleNames),
      count<T>("warmup_steps",
               {kOptimizerGroup, "N",
                "cosine schedule: update k < N uses lr (k+1)/N, then cosine from lr to 0 at the last update"},
               VKAMP_FIELD(optimizer.warmup_steps)),
      count<T>("lr_step_size", {kOptimizerGroup, "N", "step schedule: multiply the rate by gamma every N steps"},
               VKAMP_FIELD(optimizer.step_size), 1),
      real<T>("lr_gamma", {kOptimizerGroup, "X", "step schedule: the multiplier"}, VKAMP_FIELD(optimizer.gamma),
              Range::above(0)),
  };
}

std::vector<Row> loop_rows() {
  using T = TrainConfig;
  Row batch = count<T>("batch", {kLoopGroup, "N", "samples per micro-batch"}, VKAMP_FIELD(batch), 1);
  batch.aliases = {"batch_size"};
  Row resume = toggle<T>("resume", {kOutputGroup, "", "continue from --checkpoint FILE (--no-resume to turn off)"},
                         VKAMP_FIELD(resume));
  return {
      count<T>("epochs", {kLoopGroup, "N", "passes over the training set (unless --max-steps)"}, VKAMP_FIELD(epochs),
               1),
      count<T>("max_steps", {kLoopGroup, "N", "run N applied optimizer steps, the data cycling (0: --epochs decides)"},
               VKAMP_FIELD(max_steps)),
      count<T>("eval_every",
               {kLoopGroup, "N", "optimizer steps between held-out evaluations (0 = at the end of each epoch)"},
               VKAMP_FIELD(eval_every)),
      count<T>("eval_iters",
               {kLoopGroup, "N",
                "batches each evaluation during training reads, spread over the held-out set (0 = all; the "
                "final evaluation reads all)"},
               VKAMP_FIELD(eval_iters)),
      batch,
      count<T>("grad_accum", {kLoopGroup, "N", "micro-batches per optimizer step"}, VKAMP_FIELD(grad_accum), 1),
      toggle<T>("recompute",
                {kLoopGroup, "",
                 "keep only each block's input (a decoder layer's: model.layers.N, transformer.h.N) and run the "
                 "block's forward again in the backward: far less activation memory for about one more forward, the "
                 "same gradients bit for bit (a model without such blocks: no change)"},
                VKAMP_FIELD(recompute)),
      choice<T>("data_on_gpu",
                {kLoopGroup, "M",
                 "auto | always | never: keep the training set in device memory, or stream it from host memory "
                 "(auto: on the GPU when it fits --data-budget-mb)"},
                VKAMP_FIELD(data_on_gpu), kResidencyNames),
      real<T>("data_budget_mb",
              {kLoopGroup, "X", "device memory the training set may take under --data-on-gpu auto (0 = a quarter "
                                "of the largest device-local heap)"},
              VKAMP_FIELD(data_budget_mb), Range::at_least(0)),
      text<T>("checkpoint", {kOutputGroup, "FILE", "checkpoint file (model, optimizer and scaler state)"},
              VKAMP_FIELD(checkpoint_path), "none"),
      count<T>("checkpoint_every",
               {kOutputGroup, "N",
                "steps between checkpoints (0 = only at the end; a failed run never overwrites one)"},
               VKAMP_FIELD(checkpoint_every)),
      resume,
      inject_overflow_row(),
      inject_rank_row(),
      count<T>("replica_check_every",
               {kLoopGroup, "N",
                "under mpirun: steps between checks that every rank holds the same weights and optimizer state "
                "(0 = only at the end)"},
               VKAMP_FIELD(replica_check_every)),
      toggle<T>("sync_bn",
                {kLoopGroup, "",
                 "under mpirun: all-reduce BatchNorm's batch statistics across ranks, as SyncBatchNorm (the host "
                 "waits for the GPU at every BatchNorm, twice per micro-batch; without it each rank normalises with "
                 "its own and the running statistics are averaged at every replica check; one rank: plain BatchNorm)"},
                VKAMP_FIELD(sync_bn)),
  };
}

std::vector<Row> all_rows() {
  std::vector<Row> rows = {
      precision_row(), fp16_type_row(), amp_level_row(), precision_opt_level_row(),
      whole<TrainConfig>("seed", {kGeneralGroup, "N", "random seed for initialization and shuffling"},
                         VKAMP_FIELD(seed))};
  for (auto part : {scaling_rows(), optimizer_rows(), loop_rows()}) rows.insert(rows.end(), part.begin(), part.end());
  return rows;
}

}  // namespace

const std::vector<Setting<TrainConfig>>& training_settings() {
  static const std::vector<Row> rows = all_rows();
  return rows;
}

const char* scale_mode_name(LossScaleMode m) { return name_of(kScaleModeNames, m); }
const char* policy_name(OverflowPolicy p) { return name_of(kPolicyNames, p); }
const char* optimizer_name(OptimizerKind k) { return name_of(kOptimizerNames, k); }
const char* schedule_name(LrSchedule s) { return name_of(kScheduleNames, s); }
const char* residency_name(DataResidency r) { return name_of(kResidencyNames, r); }

}  // namespace vkamp::config
