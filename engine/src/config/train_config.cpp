// Training configuration: the cross-field rules of validate(), the step
// lists of --inject-overflow, and the key-by-key entry points over the
// table of training settings (training_settings.cpp).
#include "vkamp/config/train_config.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>

#include "vkamp/config/setting.hpp"
#include "vkamp/config/settings_file.hpp"

namespace vkamp::config {
namespace {

// The loss-scale rules that tie several settings together.
void check_scale_bounds(const ScalerConfig& sc) {
  if (sc.min_loss_scale > sc.max_loss_scale)
    throw ConfigError(names("min_loss_scale") + " = " + fmt(sc.min_loss_scale) + " is above " + names("max_loss_scale") +
                      " = " + fmt(sc.max_loss_scale));
  const bool starts_dynamic = sc.mode == LossScaleMode::Dynamic || sc.mode == LossScaleMode::Suggest ||
                              sc.mode == LossScaleMode::Auto || sc.mode == LossScaleMode::PerLayer;
  if (starts_dynamic && (sc.initial_loss_scale < sc.min_loss_scale || sc.initial_loss_scale > sc.max_loss_scale))
    throw ConfigError(names("initial_loss_scale") + " = " + fmt(sc.initial_loss_scale) + " is outside [" +
                      names("min_loss_scale") + ", " + names("max_loss_scale") + "] = [" + fmt(sc.min_loss_scale) + ", " +
                      fmt(sc.max_loss_scale) + "]; set an initial scale inside the range");
  // A retry recomputes the batch at a lower scale; a fixed scale would
  // overflow the same way every time.
  if (sc.policy == OverflowPolicy::Retry && sc.mode != LossScaleMode::Dynamic && sc.mode != LossScaleMode::Suggest &&
      sc.mode != LossScaleMode::PerLayer)
    throw ConfigError(
        flag_of("overflow_policy") +
        " retry (overflow_policy) recomputes at a backed-off loss scale, which needs dynamic scaling; " +
        "--loss-scale (loss_scaling_factor) is " +
        (sc.mode == LossScaleMode::Static ? "a static " + fmt(sc.initial_loss_scale)
                                           : std::string(scale_mode_name(sc.mode))) +
        ": use --overflow-policy skip, or --loss-scale dynamic");
}

}  // namespace

uint32_t histogram_interval_for(const ScalerConfig& sc) {
  if (sc.mode != LossScaleMode::Auto && sc.mode != LossScaleMode::Suggest) return sc.histogram_interval;
  // Suggest's window is auto's warm-up: the same cadence, so that the same
  // steps' histograms reach the chooser (scale_suggestion.hpp).
  const uint32_t shortest = sc.mode == LossScaleMode::Suggest ? sc.suggest_steps
                                                              : std::min(sc.auto_warmup, sc.auto_recheck);
  const uint32_t window = std::max(1u, shortest / 5);
  return sc.histogram_interval ? std::min(sc.histogram_interval, window) : window;
}

const std::vector<std::string>& setting_keys() {
  static const std::vector<std::string> keys = keys_of(training_settings());
  return keys;
}

void apply_setting(const std::string& key, const std::string& value, TrainConfig& cfg, const std::string& label) {
  apply_row(training_settings(), key, value, cfg, label);
}

void apply_setting(const std::string& key, const std::string& value, TrainConfig& cfg) {
  apply_setting(key, value, cfg, key);
}

void apply_config_file(const std::string& path, TrainConfig& cfg) {
  cfg.schedule_steps = apply_settings_file(training_settings(), path, cfg).schedule_steps;
}

// Each setting's own range is its row's; only the rules across settings are here.
void resolve_amp_level(TrainConfig& cfg) {
  if (cfg.amp_level == AmpLevel::O0) cfg.precision = Format::F32;
}

void validate(const TrainConfig& cfg) {
  check_rows(training_settings(), cfg);
  // The per-layer groups follow the graph's nodes; O1's cast steps are not
  // among them.
  if (cfg.amp_level == AmpLevel::O0 && cfg.precision != Format::F32)
    throw ConfigError("--amp-level O0 (amp_level) runs everything in fp32 but --precision is " +
                      std::string(format_name(cfg.precision)) + " (command lines and files resolve this; call "
                      "config::resolve_amp_level)");
  if (cfg.scaler.mode == LossScaleMode::PerLayer && cfg.amp_level == AmpLevel::O1)
    throw ConfigError("--loss-scale per-layer is not supported with --amp-level O1 (amp_level) yet: use O2 or "
                      "--loss-scale dynamic");
  // Gradient clipping: one knob or none (Cerebras: max_gradient_norm xor max_gradient_value).
  if (cfg.clip.max_norm > 0 && cfg.clip.max_value > 0)
    throw ConfigError("--max-gradient-norm and --max-gradient-value (max_gradient_norm, max_gradient_value) "
                      "cannot both be set: clip by the global norm or by value, not both (got " +
                      fmt(cfg.clip.max_norm) + " and " + fmt(cfg.clip.max_value) + ")");
  check_scale_bounds(cfg.scaler);
  // Per-layer scaling: the global norm is summed by amp_check
  // from gradients that each carry their own layer's scale, and unscaled by
  // one S; until it unscales per tensor, clipping by norm would clip wrongly.
  if (cfg.scaler.mode == LossScaleMode::PerLayer && cfg.clip.max_norm > 0)
    throw ConfigError("--max-gradient-norm (max_gradient_norm) is not supported with --loss-scale per-layer yet "
                      "(the norm is taken of gradients that carry different scales); clip by value "
                      "(--max-gradient-value) or use --loss-scale dynamic");
  if (cfg.resume && cfg.checkpoint_path.empty())
    throw ConfigError("--resume (resume: true) needs a checkpoint file: give --checkpoint FILE (checkpoint)");
}

std::vector<StepRange> parse_step_ranges(const std::string& s) {
  std::vector<StepRange> out;
  std::string all = trim(s);
  if (all.empty()) return out;
  auto bad = [&](const std::string& why) -> ConfigError {
    return ConfigError("bad step list '" + s + "': " + why + " (expected e.g. 120,300-305)");
  };
  auto number = [&](const std::string& item, const std::string& n) -> uint64_t {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), v, 10);
    if (n.empty() || ec != std::errc() || p != n.data() + n.size())
      throw bad("'" + item + "' is not a step or a FIRST-LAST range");
    return v;
  };
  size_t pos = 0;
  while (true) {
    size_t comma = all.find(',', pos);
    std::string item =
        trim(std::string_view(all).substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (item.empty()) throw bad("empty item");
    size_t dash = item.find('-');
    StepRange r;
    if (dash == std::string::npos) {
      r.first = r.last = number(item, item);
    } else {
      r.first = number(item, trim(std::string_view(item).substr(0, dash)));
      r.last = number(item, trim(std::string_view(item).substr(dash + 1)));
      if (r.last < r.first) throw bad("range '" + item + "' ends before it starts");
    }
    out.push_back(r);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

TrainConfig with_live_scaler(const TrainConfig& cfg, const ScalerConfig& sc) {
  if (sc.mode != cfg.scaler.mode)
    throw ConfigError("the loss-scale mode cannot change during a run; start a new run");
  TrainConfig next = cfg;
  next.scaler = sc;
  if (sc.mode == LossScaleMode::Dynamic && sc.min_loss_scale <= sc.max_loss_scale)
    next.scaler.initial_loss_scale = std::clamp(sc.initial_loss_scale, sc.min_loss_scale, sc.max_loss_scale);
  validate(next);
  return next;
}

}  // namespace vkamp::config
