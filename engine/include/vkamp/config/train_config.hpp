// Training configuration: one struct filled from defaults, then a YAML file
// (--config), then command-line flags, in that order. The YAML keys use the
// Cerebras names where they exist (fp16_type, loss_scaling_factor,
// initial_loss_scale, steps_per_increase, min_loss_scale, max_loss_scale,
// max_gradient_norm, max_gradient_value) and vkamp's own names otherwise.
// Each setting's key, flag, help, default and range are one row of
// training_settings() (setting.hpp, training_settings.cpp).
//
// TrainConfig holds what the trainer reads, and only that. Where a run's
// files go and which GPU it uses (data, metrics, report, device, progress
// bar, the weights files of --save/--init-from and their --save-dtype: the
// samples read and write those, the trainer only holds the weights) belong
// to the application: app/run_options.hpp extends this struct with
// them. Checkpoints stay here: the trainer writes them itself (every N
// steps, and on fail-fast) and --resume restores its step, optimizer and
// scaler state. The settings-file reader stays in the engine too
// (settings_file.hpp): it knows no keys, the table it is given does.
#pragma once
#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "vkamp/config_error.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/amp_level.hpp"

namespace vkamp::config {

// Suggest: trains suggest_steps updates at the dynamic scale, then the
// application reports the power of two the histograms of the first
// suggest_steps steps call for (auto's first choice; and stops).
// Auto: dynamic for auto_warmup steps, then that power of two, re-checked
// every auto_recheck steps on the GPU (gpu_abi/scale_choice.h).
// PerLayer: one scale per layer of a chain of layers, each
// following its own gradients' amax history (train/layer_scales.hpp).
enum class LossScaleMode { None, Static, Dynamic, Suggest, Auto, PerLayer };
enum class OverflowPolicy { Skip, Apply, Retry };
enum class OptimizerKind { SGD, Adam, AdamW };  // SGD takes momentum (0 = plain)
enum class LrSchedule { Constant, Step, Cosine };
// Where the training set lives: in device memory (gathered there), or in
// host memory streamed through a small host-visible staging ring.
enum class DataResidency { Auto, Always, Never };

struct ScalerConfig {
  LossScaleMode mode = LossScaleMode::Dynamic;
  // PyTorch GradScaler defaults (docs/design.md, "Loss scaling").
  double initial_loss_scale = 65536.0;  // also the fixed scale in Static mode
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  uint32_t steps_per_increase = 2000;  // clean steps before the scale grows (PyTorch: growth_interval)
  double min_loss_scale = 1.0;         // the scale never goes below (never 0)
  double max_loss_scale = 3.4028234663852886e38;  // fp32 max: the scale never becomes inf
  uint32_t hysteresis = 1;          // DeepSpeed: overflows tolerated before a backoff
  bool consecutive_hysteresis = false;  // DeepSpeed: every clean step refills the hysteresis
  OverflowPolicy policy = OverflowPolicy::Skip;
  uint32_t max_retries = 3;         // Retry policy: recomputations of one batch
  uint32_t fail_after_overflows = 100;  // stop after this many consecutive overflows at min_loss_scale
  uint32_t histogram_interval = 50; // exponent histograms every K steps (0 = never)
  // --loss-scale suggest and auto (gpu_abi/scale_choice.h).
  double underflow_target = 0.001;  // fraction of gradient elements allowed below the smallest normal (scale_choice.h)
  uint32_t suggest_steps = 50;      // suggest: updates at the dynamic scale before the suggestion
  uint32_t auto_warmup = 50;        // auto: steps of dynamic scaling before the first choice
  uint32_t auto_recheck = 200;      // auto: steps between re-checks
  uint32_t auto_overflow_tolerance = 2;  // auto: overflowed steps a window takes before it re-checks at once
  // PerLayer only, for tests and experiments (no settings row): fixed scales,
  // one per scale group in forward order (LayerScales), that never adapt.
  // Empty: every group starts at initial_loss_scale and follows its history.
  std::vector<double> fixed_layer_scales;
};

// The histogram interval the GPU uses: auto at least five per warm-up and
// re-check window, suggest five per suggest_steps (auto's cadence, so that
// suggest_steps = auto_warmup gives both the same histograms), never fewer
// than the user's interval asks; the other modes the user's.
uint32_t histogram_interval_for(const ScalerConfig& sc);

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::SGD;
  double lr = 0.01;
  double momentum = 0.9;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weight_decay = 0.0;
  // false: decay only tensors with 2+ dims, never biases or norm gains
  // (nanoGPT's rule); true: every parameter (PyTorch's optimizers).
  bool decay_vectors = true;
  LrSchedule schedule = LrSchedule::Constant;
  uint32_t warmup_steps = 0;   // cosine: update k < warmup uses lr (k+1)/warmup, then cosine to 0
  uint32_t step_size = 1000;   // step schedule: multiply by gamma every step_size steps
  double gamma = 0.1;
};

struct ClipConfig {
  double max_norm = 0.0;   // 0 = off; global L2 norm of the unscaled gradients
  double max_value = 0.0;  // 0 = off; elementwise clamp of the unscaled gradients
};

// Steps (optimizer steps, counted from 0) where an inf is written into a
// gradient: "--inject-overflow 120,300-305".
struct StepRange {
  uint64_t first = 0, last = 0;
};

struct TrainConfig {
  Format precision = Format::F16;    // fp32 | float16 | bfloat16 | cbfloat16
  // Which ops run in `precision` and which in fp32 (amp_level.hpp, graph/precision_plan.hpp).
  // O0 runs everything in fp32: resolve_amp_level sets precision to fp32.
  AmpLevel amp_level = AmpLevel::O2;
  ScalerConfig scaler;
  OptimizerConfig optimizer;
  ClipConfig clip;
  uint32_t batch = 128;
  uint32_t epochs = 2;
  uint32_t max_steps = 0;            // the run's length in applied updates, over `epochs` (0: epochs decide)
  // Not a setting: a Model Zoo file's schedule length (its total_iters),
  // which vkamp's cosine replaces by the run's (0 = none; settings_file.hpp).
  uint32_t schedule_steps = 0;
  uint32_t eval_every = 0;           // updates between held-out evaluations (0 = at each epoch's end)
  // Batches each evaluation during training reads, spread evenly over the
  // held-out set (0 = all of it). nanoGPT's eval_iters; the final
  // evaluation of a run is always the whole set.
  uint32_t eval_iters = 0;
  uint32_t grad_accum = 1;           // micro-batches per optimizer step
  // Activation recomputation: each block's forward runs again in the
  // backward, from its input (graph::Executor).
  bool recompute = false;
  DataResidency data_on_gpu = DataResidency::Auto;
  // Auto keeps the set on the GPU only when it fits this many MiB
  // (0 = a quarter of the largest device-local memory heap).
  double data_budget_mb = 0;
  uint64_t seed = 1;
  std::string checkpoint_path;       // empty = no checkpoints
  uint32_t checkpoint_every = 0;     // steps; 0 = only at the end and on fail-fast
  bool resume = false;
  std::vector<StepRange> inject_overflow;
  // Allows the app's "inject" button (Trainer::inject_overflow_next): its
  // first press records the injection pass into the step; until then a
  // step without marked steps has none, as with this off. Off, the button
  // is an error.
  bool live_fault_injection = false;
  // Data-parallel runs (mpirun): the rank whose gradients --inject-overflow
  // poisons (-1 = every rank), and the steps between the checks that every
  // rank holds the same masters and optimizer state (0 = only at the end).
  int32_t inject_rank = -1;
  uint32_t replica_check_every = 100;
  // BatchNorm under mpirun: all-reduce the batch statistics (SyncBatchNorm;
  // train/sync_batch_norm.hpp). Without it each rank uses its own and the
  // running statistics are averaged at every replica check. One rank: no-op.
  bool sync_bn = false;
};

// These read and write the training settings only; the application's
// RunOptions has the same functions over its own keys too (device, data,
// metrics, ...: app/run_options.hpp).

// Applies a YAML settings file to cfg: flat `key: value` lines and/or the
// Cerebras trainer layout (settings_file.hpp). Unknown keys, bad values,
// YAML errors and unreadable files throw ConfigError ("FILE:LINE: ...").
void apply_config_file(const std::string& path, TrainConfig& cfg);

// Applies one setting by its YAML key. Throws ConfigError naming the key.
void apply_setting(const std::string& key, const std::string& value, TrainConfig& cfg);

// Like apply_setting, but error messages name `label` (a flag such as
// "--lr") instead of the key.
void apply_setting(const std::string& key, const std::string& value, TrainConfig& cfg,
                   const std::string& label);

// Every key apply_setting accepts, aliases included (learning_rate, batch_size).
const std::vector<std::string>& setting_keys();

// The candidate closest to `word` by edit distance, or "" if none is close.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

// The key an unknown key probably meant: another tool's name for the same
// knob (growth_interval -> steps_per_increase) or a close spelling among
// `keys` (default: setting_keys()); "" if none.
std::string suggest_key(const std::string& unknown, const std::vector<std::string>& keys);
std::string suggest_key(const std::string& unknown);

// After every setting is read: --amp-level O0 means fp32 storage, whatever
// --precision named (that names the 16-bit format of the other levels).
void resolve_amp_level(TrainConfig& cfg);

// Checks each setting's range (its row's) and the rules across settings
// (both clip knobs, min > max, retry without dynamic scaling, ...).
void validate(const TrainConfig& cfg);
// New loss-scaling knobs for a run in progress (the app): the mode must not
// change, and a dynamic run's initial scale no longer matters. Returns cfg
// with the new knobs; throws ConfigError.
TrainConfig with_live_scaler(const TrainConfig& cfg, const ScalerConfig& sc);

// Parses "120,300-305" into ranges; throws ConfigError on a bad list.
std::vector<StepRange> parse_step_ranges(const std::string& s);

const char* scale_mode_name(LossScaleMode m);
const char* policy_name(OverflowPolicy p);
const char* optimizer_name(OptimizerKind k);
const char* schedule_name(LrSchedule s);
const char* residency_name(DataResidency r);

}  // namespace vkamp::config
