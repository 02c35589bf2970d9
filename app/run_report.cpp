#include "app/run_report.hpp"

#include <cmath>
#include <cstdio>

#include "app/epoch_watch.hpp"
#include "app/monitor.hpp"
#include "vkamp/ops/gemm_tuner.hpp"

namespace vkamp::app {
namespace {

std::string scale_text(double s) {
  char buf[32];
  double l = std::log2(s);
  if (s > 0 && l == std::floor(l) && std::abs(l) >= 4) std::snprintf(buf, sizeof buf, "2^%d", int(l));
  else std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

std::string describe_run(const config::TrainConfig& cfg) {
  std::string s = format_name(cfg.precision);
  if (cfg.amp_level != graph::AmpLevel::O2) s += std::string(" at ") + graph::amp_level_name(cfg.amp_level);
  switch (cfg.scaler.mode) {
    case config::LossScaleMode::None: return s + ", no loss scaling";
    case config::LossScaleMode::Static: return s + ", static loss scale " + scale_text(cfg.scaler.initial_loss_scale);
    case config::LossScaleMode::Dynamic: return s + ", dynamic loss scale from " + scale_text(cfg.scaler.initial_loss_scale);
    case config::LossScaleMode::Suggest:
      return s + ", loss-scale suggestion after " + std::to_string(cfg.scaler.suggest_steps) + " dynamic steps";
    case config::LossScaleMode::Auto:
      return s + ", auto loss scale (dynamic for " + std::to_string(cfg.scaler.auto_warmup) +
             " steps, then re-checked every " + std::to_string(cfg.scaler.auto_recheck) + ")";
    case config::LossScaleMode::PerLayer:
      return s + ", per-layer loss scales from " + scale_text(cfg.scaler.initial_loss_scale);
  }
  return s;
}

int report_failure(const char* name, const config::TrainConfig& cfg, const train::TrainSummary& s) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: stopped: %s\n", name, s.failure.c_str());
  if (!cfg.checkpoint_path.empty())
    std::fprintf(stderr, "%s: the last good checkpoint, if one was written, is kept at %s\n", name,
                 cfg.checkpoint_path.c_str());
  return 1;
}

std::string best_summary(const RunOptions& cfg, const RunResult& s) {
  if (!s.best) return "";
  // The monitored value, and the evaluation's own metric beside it when
  // that is another (a classifier's accuracy beside its val_loss).
  std::string out = "  best " + monitor_text(cfg.early_stop_monitor, s.best_value) + " at " + s.best_at;
  const bool same = (cfg.early_stop_monitor == Monitor::ValAccuracy && s.best->metric == "accuracy") ||
                    (cfg.early_stop_monitor != Monitor::ValAccuracy && s.best->metric != "accuracy");
  if (!same) out += " (" + held_out_text(s.best->metric, s.best->value) + ")";
  // The in-run evaluations may have read only --eval-iters batches.
  if (!s.sampled.empty()) out += ", evaluated" + s.sampled + " (--eval-iters)";
  out += "\n";
  if (!s.stopped_early_at.empty()) {
    char delta[64] = "";
    if (cfg.early_stop_min_delta > 0)
      std::snprintf(delta, sizeof delta, " by more than %g", cfg.early_stop_min_delta);
    out += "  stopped early at " + s.stopped_early_at + " (--early-stop " + std::to_string(cfg.early_stop) +
           "): no better " + monitor_name(cfg.early_stop_monitor) + delta + " since " + s.best_at + "\n";
  }
  return out;
}

void print_run_report(const RunOptions& cfg, train::Trainer& trainer, const RunResult& s) {
  print_summary(cfg, s);
  // --loss-scale per-layer: each layer's scale as the run left it, forward order.
  const std::vector<train::LayerScaleReading> layers = trainer.read_layer_scales();
  if (!layers.empty()) {
    std::printf("  per-layer loss scales (layer: scale, amax of its window, overflows):");
    for (const train::LayerScaleReading& l : layers)
      std::printf(" %s: 2^%g, %.3g, %u;", l.layer.c_str(), std::log2(double(l.scale)), double(l.amax), l.overflows);
    std::printf("\n");
  }
  std::printf("%s", underflow_summary(cfg.precision, s).c_str());
  std::printf("%s", best_summary(cfg, s).c_str());
  if (s.ranks > 1)
    std::printf("  data parallel over %u ranks: all-reduce %.3f ms and %.1f KiB per step (fp32 gradients and losses), "
                "%llu host waits for it, %llu for replica checks\n",
                s.ranks, s.allreduce_ms_per_step, double(s.allreduce_bytes_per_step) / 1024,
                static_cast<unsigned long long>(s.host_waits_for_allreduce),
                static_cast<unsigned long long>(s.host_waits_for_replica_checks));
  std::printf("  GPU time per step %.2f ms, of which the AMP check and scale update %.2f ms (%.1f%%)\n",
              s.gpu_ms_per_step, s.amp_ms_per_step,
              s.gpu_ms_per_step > 0 ? 100 * s.amp_ms_per_step / s.gpu_ms_per_step : 0.0);
  // Which kernel each class of fp16 product ran on (ops/gemm_tuner.hpp).
  const auto gemms = vkamp::ops::gemm_tuner(trainer.context()).used();
  if (!gemms.empty()) {
    std::printf("  GEMM kernels (class: kernel, from):");
    for (const auto& u : gemms) std::printf(" %s: %s, %s;", u.cls.c_str(), u.kernel.c_str(), u.source.c_str());
    std::printf("\n");
  }
  if (cfg.profile) {
    std::printf("  by kernel (ms/step):");
    for (auto& [label, ms] : s.kernel_ms_per_step) std::printf(" %s %.2f", label.c_str(), ms);
    std::printf("\n");
    // The op classes and the costliest dispatches, as shares of the step's
    // GPU time (bench/gpu_vs_torch.sh lines them up with PyTorch's).
    auto share = [&](double ms) { return s.gpu_ms_per_step > 0 ? 100 * ms / s.gpu_ms_per_step : 0.0; };
    std::printf("  profile by op class (ms/step, share of GPU time):\n");
    for (auto& [cls, ms] : s.class_ms_per_step) std::printf("    %-12s %9.3f  %5.1f%%\n", cls.c_str(), ms, share(ms));
    std::printf("  top %zu dispatches (place in the step, kernel, ms/step, share):\n", s.top_dispatches.size());
    for (const train::DispatchShare& d : s.top_dispatches)
      std::printf("    #%-5u %-30s %9.3f  %5.1f%%\n", d.index, d.label.c_str(), d.ms, share(d.ms));
    const CommandCounts& c = s.commands_per_step;
    std::printf("  commands per step: %u dispatches, %u barriers", c.dispatches, c.barriers);
    if (c.copies) std::printf(", %u copies", c.copies);
    if (c.fills) std::printf(", %u fills", c.fills);
    std::printf("\n");
  }
  print_device_memory(trainer);
}

void print_device_memory(train::Trainer& trainer) {
  const graph::MemoryReport mem = trainer.model().memory();
  auto mib = [](uint64_t b) { return double(b) / (1 << 20); };
  std::string by_format;
  for (const auto& [f, bytes] : mem.activations_by_format) {
    char part[64];
    std::snprintf(part, sizeof part, "%s%s %.2f", by_format.empty() ? "" : ", ", format_name(f), mib(bytes));
    by_format += part;
  }
  // The logits' share: every row's and their gradient, or one chunk's.
  char logits[96] = "";
  if (trainer.model().logit_chunks())
    std::snprintf(logits, sizeof logits, "; logits %.2f, in chunks of %u rows", mib(mem.logits),
                  trainer.model().logit_chunks()->chunk_rows());
  else if (trainer.model().reads_ids())
    std::snprintf(logits, sizeof logits, "; logits %.2f, whole", mib(mem.logits));
  // --recompute: the other setting's plan beside this one's, so that a dry
  // run shows what turning it on (or off) would take. The workspace differs
  // where an op keeps much for its backward (attention's probabilities).
  by_format += logits;
  char workspace[96];
  std::snprintf(workspace, sizeof workspace, "%.2f", mib(mem.workspace));
  if (mem.activations_other_recompute) {
    const char* other = mem.recompute ? "without" : "with";
    char part[64];
    std::snprintf(part, sizeof part, "; %.2f %s --recompute", mib(mem.activations_other_recompute), other);
    by_format += part;
    if (std::llround(mib(mem.workspace_other_recompute) * 100) != std::llround(mib(mem.workspace) * 100))
      std::snprintf(workspace, sizeof workspace, "%.2f (%.2f %s --recompute)", mib(mem.workspace),
                    mib(mem.workspace_other_recompute), other);
  }
  // Beside the plan, every device buffer the context holds (the recorded
  // steps' scratch and evaluation's too), now and at most so far.
  const Context& ctx = trainer.context();
  std::string frozen;
  if (mem.frozen) {
    char part[64];
    std::snprintf(part, sizeof part, "frozen base %.2f, ", mib(mem.frozen));
    frozen = part;
  }
  std::printf("  device memory (MiB): %sparameters %.2f, optimizer state %.2f, activations %.2f (%.2f without reuse: "
              "%s), workspace %s, training data %.2f (%s); planned %.2f before allocating; every buffer held "
              "%.2f now, %.2f at most\n",
              frozen.c_str(), mib(mem.parameters), mib(mem.optimizer_state), mib(mem.activations), mib(mem.activations_unshared),
              by_format.c_str(), workspace, mib(trainer.data_device_bytes()),
              trainer.data_resident() ? "resident" : "a staging ring; the set streams from host memory",
              mib(trainer.model().planned().total()), mib(ctx.device_bytes()), mib(ctx.peak_device_bytes()));
}

int report_dry_run(const char* name, train::Trainer& trainer) {
  std::printf("%s: --dry-run: set up and recorded, not trained\n", name);
  print_device_memory(trainer);
  return 0;
}

void print_summary(const config::TrainConfig& cfg, const train::TrainSummary& s) {
  // A tenth below 100 samples/s, a thousandth below 1: CPU drivers' rates
  // are single digits or less (a 1B model's step takes minutes), and the
  // benchmarks in turns compare them (bench/turns.sh, bench/qlora_rate.sh).
  std::printf("  %-34s steps %u (applied %u, skipped %u, overflows %u), final scale %g, last loss %.4g, "
              "%.*f samples/s\n",
              describe_run(cfg).c_str(), s.steps, s.applied, s.skipped, s.overflows, s.final_scale,
              s.last_loss, s.samples_per_second < 1 ? 3 : s.samples_per_second < 100 ? 1 : 0, s.samples_per_second);
}

namespace {

// A share of the gradient elements in percent, small ones readable.
std::string percent(double share) {
  char buf[32];
  if (share == 0) return "0%";
  if (share < 1e-4) return "<0.01%";
  std::snprintf(buf, sizeof buf, "%.2f%%", 100 * share);
  return buf;
}

}  // namespace

std::string underflow_summary(Format precision, const train::TrainSummary& s) {
  if (!s.steps) return "";
  const train::TrainSummary::Underflow& u = s.underflow;
  std::string out = "  underflow: lost unscaled " + percent(u.lost_unscaled_mean) + " (last step " +
                    percent(u.lost_unscaled_last) + "), the gradients the loss scale kept from flushing to 0 in " +
                    format_name(precision) + "; subnormal " + percent(u.subnormal_mean) + ", zeros " +
                    percent(u.zeros_mean) + " (means over the steps)";
  if (!u.worst_tensor.empty())
    out += "; most lost unscaled: " + u.worst_tensor + " (" + percent(u.worst_tensor_lost_unscaled) + ")";
  out += "\n  headroom: ";
  if (!u.min_headroom) out += "not measured (no step without overflow had a nonzero gradient)";
  else if (*u.min_headroom < 0)
    out += "none: the largest gradient passed " + std::string(format_name(precision)) + "'s largest value by " +
           std::to_string(-*u.min_headroom) + " doublings";
  else
    out += std::to_string(*u.min_headroom) + " doubling" + (*u.min_headroom == 1 ? "" : "s") +
           " of the loss scale left before the largest gradient overflows, at the tightest step without overflow";
  return out + "\n";
}

}  // namespace vkamp::app
