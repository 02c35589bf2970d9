#include "sample_main.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include "app/cli.hpp"
#include "app/epoch_watch.hpp"
#include "app/progress_bar.hpp"
#include "app/report_picture.hpp"
#include "app/run_length.hpp"
#include "app/tool_main.hpp"
#include "app/workloads.hpp"
#include "vkamp/dist/communicator.hpp"
#include "vkamp/error.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/train/checkpoint_file.hpp"
#include "vkamp/train/scale_suggestion.hpp"
#include "vkamp/data/data_error.hpp"
#include "vkamp/io/metrics_log.hpp"
#include "vkamp/models/model_spec.hpp"
#include "vkamp/io/torch_layout.hpp"

namespace vkamp::samples {
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

namespace {

// Under mpirun, rank 0 alone writes the run's files and the progress bar
// and prints the run's report on stdout: the replicas are identical, so the
// others would only repeat it. They still read what they need (--resume's
// checkpoint, --init-from) and print their device and errors on stderr.
void leave_outputs_to_rank_0(app::RunOptions& cfg, const dist::Communicator& comm) {
  if (comm.rank() == 0) return;
  cfg.metrics_path.clear();
  cfg.report_path.clear();
  cfg.save_path.clear();
  cfg.progress = false;
  if (!std::freopen("/dev/null", "w", stdout)) std::fprintf(stderr, "%scannot silence stdout\n", comm.prefix().c_str());
}

}  // namespace

int sample_main(const SampleInfo& info, app::RunOptions cfg, int argc, char** argv,
                const std::function<int(app::RunOptions&, Context&)>& body) {
  dist::Communicator& comm = dist::Communicator::world();
  const app::RunOptions defaults = cfg;
  // Flags and outputs are checked the same way on every rank with the same
  // result: rank 0 alone prints the message, and every rank exits 2.
  const bool speaks = comm.rank() == 0;
  try {
    app::CliResult r = app::parse_command_line(argc, argv, cfg, info.rows);
    if (r.help) {
      if (speaks) {
        app::RunOptions scratch = defaults;
        app::Program p{info.name, "[flags]", info.about, true, app::kConfigEpilogue};
        std::fputs(app::usage(p, app::run_flags(scratch, defaults, info.rows)).c_str(), stdout);
      }
      return 0;
    }
    if (r.version) {
      if (speaks) std::printf("%s\n", app::version_line(info.name).c_str());
      return 0;
    }
  } catch (const vkamp::ConfigError& e) {
    if (speaks) std::fprintf(stderr, "%s: %s\n(see %s --help)\n", info.name, e.what(), info.name);
    return 2;
  }
  if (!cfg.report_path.empty() && !app::dashboard_built()) {
    if (speaks)
      std::fprintf(stderr, "%s: --report %s: this build has no dashboard (configured with -DVKAMP_BUILD_UI=OFF)\n",
                   info.name, cfg.report_path.c_str());
    return 2;
  }
  // Fail now rather than after training when an output cannot be written.
  for (auto [flag, path] : {std::pair{"--report", &cfg.report_path}, std::pair{"--metrics", &cfg.metrics_path},
                            std::pair{"--save", &cfg.save_path}}) {
    if (path->empty()) continue;
    std::string dir = std::filesystem::path(*path).parent_path().string();
    if (dir.empty()) dir = ".";
    if (access(dir.c_str(), W_OK) != 0) {
      if (speaks)
        std::fprintf(stderr, "%s: %s %s: cannot write into %s: %s\n", info.name, flag, path->c_str(), dir.c_str(),
                     std::strerror(errno));
      return 2;
    }
  }
  leave_outputs_to_rank_0(cfg, comm);
  const std::string who = comm.prefix();
  // From here on a rank can fail alone (its device, its copy of the data).
  // Before training, the failing rank joins the ranks' agreement
  // (Communicator::agree_ready, called by Trainer::start) so that all exit
  // 2 together and the lowest failing rank alone says why; once training
  // has started, the others may be waiting in an all-reduce, so a failing
  // rank aborts the whole job.
  auto fail = [&](const std::exception& e) {
    const int status = app::exit_status(e);
    const std::string text = std::string(info.name) + ": " + (status == 1 ? "error: " : "") + e.what();
    if (comm.distributed() && !comm.ready_agreed()) comm.agree_ready(false);
    if (comm.distributed() && comm.first_failed() < 0) comm.abort(status, text);  // failed while training
    if (!comm.distributed() || comm.first_failed() == comm.rank()) std::fprintf(stderr, "%s%s\n", who.c_str(), text.c_str());
    return status;
  };
  std::unique_ptr<Context> ctx;
  try {
    ContextOptions opt;
    opt.device = cfg.device;
    // Unless --device or $VKAMP_DEVICE says otherwise, the ranks of one
    // machine take its GPUs in turn.
    if (comm.distributed()) opt.local_rank = comm.local_rank();
    ctx = std::make_unique<Context>(opt);
  } catch (const Error& e) {
    if (comm.distributed()) return fail(vkamp::ConfigError(e.what()));
    std::fprintf(stderr, "%s: %s\n", info.name, e.what());
    return 2;
  }
  const GemmMma mma = ctx->gemm_mma();
  if (!cfg.quiet)
    std::fprintf(stderr, "%s%s on %s (%s%s)\n", who.c_str(), info.name, ctx->info().name.c_str(),
                 precision_path_name(ctx->path()),
                 mma == GemmMma::coopmat    ? (ctx->coopmat_api() == vkamp::CoopmatApi::khr
                                                   ? "; fp16 GEMMs on tensor cores (KHR)"
                                                   : "; fp16 GEMMs on tensor cores (NV)")
                 : mma == GemmMma::emulated ? "; fp16 GEMMs on the tensor-core tiling, emulated"
                                            : "");
  try {
    return body(cfg, *ctx);
  } catch (const dist::PeerFailed&) {
    return 2;  // another rank could not start; it says why
  } catch (const std::exception& e) {
    return fail(e);
  }
}

RunResult train_with_progress(train::Trainer& trainer, const app::RunOptions& cfg, const std::string& label,
                              const Observers& also, ui::RunHistory* history) {
  if ((cfg.early_stop || cfg.save_best) && !trainer.has_held_out())
    throw vkamp::ConfigError(std::string(cfg.early_stop ? "--early-stop" : "--save-best") +
                             " watches the held-out metric, and this run has none (vkamp-train: give --test FILE "
                             "or --val-split X)");
  const train::UnderflowScope gradients = train::underflow_scope(cfg.precision, trainer.model().tensors());
  if (history) {
    history->title = label + " · " + describe_run(cfg);
    history->samples_per_step = cfg.batch * cfg.grad_accum * uint32_t(dist::Communicator::world().size());
    history->budget = trainer.budget();
    history->histogram_interval = config::histogram_interval_for(cfg.scaler);
    history->precision = cfg.precision;
    history->gradients = gradients;
    history->status = "training";
  }
  std::unique_ptr<io::MetricsLog> log;
  if (!cfg.metrics_path.empty()) log = std::make_unique<io::MetricsLog>(cfg.metrics_path, gradients);
  app::ProgressBar bar(label, trainer.budget(), cfg.progress && !cfg.quiet);
  app::EpochWatch watch(cfg.epochs, cfg.eval_every != 0, cfg.early_stop);
  RunResult result;
  trainer.on_step = [&](const train::StepMetrics& m) {
    if (log) log->write(m);
    char status[128];
    std::snprintf(status, sizeof status, "loss %.4g  scale %g%s", m.loss, m.loss_scale,
                  m.skipped ? "  (skipped)" : "");
    bar.update(m.applied, status);
    watch.add(m);
    if (history) history->add(m);
    if (also.step) also.step(m);
  };
  const bool suggest = cfg.scaler.mode == config::LossScaleMode::Suggest;
  train::ScaleSuggester suggester;
  trainer.on_histogram = [&](const train::TensorHistogram& h) {
    if (suggest) suggester.add(h);
    if (log) log->write(h);
    if (history) history->add(h);
    if (also.histogram) also.histogram(h);
  };
  // Per tensor at the histogram steps only: every step's would swamp the
  // log (the step records carry the totals).
  trainer.on_tensor_underflow = [&](const train::TensorUnderflow& u) {
    if (!train::per_tensor_step(u.step, cfg.scaler.histogram_interval)) return;
    if (log) log->write(u);
    if (history) history->add(u);
  };
  // A long evaluation (charlm's) shows a bar of its own, on a terminal
  // only, once it has taken half a second (a short one would flicker).
  std::optional<app::ProgressBar> eval_bar;
  std::optional<std::chrono::steady_clock::time_point> eval_start;
  if (bar.on_terminal())
    trainer.on_eval_progress = [&](uint64_t done, uint64_t total) {
      const auto now = std::chrono::steady_clock::now();
      if (!eval_start) eval_start = now;
      if (!eval_bar && now - *eval_start < std::chrono::milliseconds(500)) return;
      if (!eval_bar) {
        bar.clear();
        eval_bar.emplace("  evaluating", total);
      }
      eval_bar->update(done, "");
    };
  trainer.on_epoch_end = [&](const train::EpochEnd& e) {
    eval_start.reset();
    if (eval_bar) {
      eval_bar->clear();
      eval_bar.reset();
    }
    if (log) log->write(e);
    if (history && !e.metric.empty()) history->evals.push_back({e.step, e.value, e.epoch, e.metric});
    const app::EpochWatch::Verdict v = watch.end(e);
    if (!cfg.quiet) {
      bar.clear();
      std::printf("%s\n", v.line.c_str());
      std::fflush(stdout);
    }
    // No step is in flight here: the master weights are this evaluation's.
    if (v.improved && cfg.save_best) {
      result.best_weights = trainer.model().read_master();
      result.best_buffers = trainer.model().read_buffers();
    }
    if (v.stop && e.applied < trainer.budget()) {  // not when the budget ends here anyway
      result.stopped_early_at = watch.where(e);
      trainer.request_stop();
    }
    if (also.epoch_end) also.epoch_end(e);
  };
  trainer.start();
  while (trainer.advance()) {
  }
  static_cast<train::TrainSummary&>(result) = trainer.finish();
  bar.finish();
  // The callbacks hold this frame's locals.
  trainer.on_step = nullptr;
  trainer.on_histogram = nullptr;
  trainer.on_tensor_underflow = nullptr;
  trainer.on_epoch_end = nullptr;
  trainer.on_eval_progress = nullptr;
  result.best = watch.best();
  if (result.best) result.best_at = watch.where(*result.best);
  if (history) history->status = result.failed ? "stopped: " + result.failure : "finished";
  if (suggest && !result.failed) {
    std::printf("%s", train::suggestion_text(suggester.suggest(cfg.precision, cfg.scaler), cfg.precision,
                                             cfg.scaler.underflow_target)
                          .c_str());
    std::fflush(stdout);
    result.suggested = true;
  }
  return result;
}

void write_report(const app::RunOptions& cfg, const ui::RunHistory& history) {
  if (cfg.report_path.empty()) return;
  app::write_report_picture(history, cfg.report_path, cfg.device);
  std::printf("  dashboard picture written to %s\n", cfg.report_path.c_str());
}

double final_held_out(train::Trainer& trainer, const config::TrainConfig& cfg, const ui::RunHistory& history,
                      const data::HostData& held_out) {
  // The last evaluation point is the last update's: its weights are these.
  if (history.evals.empty() || cfg.eval_iters) return trainer.evaluate(held_out);
  return history.evals.back().accuracy;
}

void init_weights_from_file(const app::RunOptions& cfg, train::Trainer& trainer) {
  if (cfg.init_from.empty()) return;
  train::Model& model = trainer.model();
  const io::TensorFile file = io::read_safetensors(cfg.init_from);
  std::vector<float> buffers;
  model.write_master(model.spec().layers.empty() ? io::import_torch_tensors(model.graph(), file, cfg.init_from, &buffers)
                                                 : io::import_torch_tensors(model.spec(), file, cfg.init_from, &buffers));
  model.write_buffers(buffers);  // BatchNorm's running statistics
  std::fprintf(stderr, "weights loaded from %s\n", cfg.init_from.c_str());
}

void save_weights(const app::RunOptions& cfg, train::Trainer& trainer, const RunResult& s,
                  const std::map<std::string, std::string>& extra) {
  if (cfg.save_path.empty()) return;
  const train::Model& model = trainer.model();
  const bool best = cfg.save_best && s.best && !s.best_weights.empty();
  const std::vector<float> weights = best ? s.best_weights : model.read_master();
  const std::vector<float> buffers = best ? s.best_buffers : model.read_buffers();
  const io::DType dtype = cfg.save_dtype == Format::F16    ? io::DType::F16
                          : cfg.save_dtype == Format::BF16 ? io::DType::BF16
                                                           : io::DType::F32;
  io::TensorFile file;
  const bool from_spec = !model.spec().layers.empty();
  file.tensors = from_spec ? io::export_torch_tensors(model.spec(), weights, dtype, buffers)
                           : io::export_torch_tensors(model.graph(), weights, dtype, buffers);
  char scale[32];
  std::snprintf(scale, sizeof scale, "%.9g", double(s.final_scale));
  file.metadata = {{"vkamp.model", from_spec ? models::describe(model.spec()) : model.graph().origin()},
                   {"vkamp.precision", format_name(cfg.precision)},
                   {"vkamp.step", std::to_string(best ? s.best->applied : s.applied)},
                   {"vkamp.loss_scale", scale}};
  for (const auto& [key, value] : extra) file.metadata[key] = value;
  io::write_safetensors(cfg.save_path, file);
  if (best)
    std::printf("  weights (%s) of %s (the best: %s) written to %s\n", io::dtype_name(dtype), s.best_at.c_str(),
                app::held_out_text(s.best->metric, s.best->value).c_str(), cfg.save_path.c_str());
  else std::printf("  weights (%s) written to %s\n", io::dtype_name(dtype), cfg.save_path.c_str());
}

int report_failure(const char* name, const config::TrainConfig& cfg, const train::TrainSummary& s) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: stopped: %s\n", name, s.failure.c_str());
  if (!cfg.checkpoint_path.empty())
    std::fprintf(stderr, "%s: the last good checkpoint, if one was written, is kept at %s\n", name,
                 cfg.checkpoint_path.c_str());
  return 1;
}

void print_run_report(const app::RunOptions& cfg, train::Trainer& trainer, const RunResult& s) {
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
  if (!s.stopped_early_at.empty() && s.best)
    std::printf("  stopped early at %s (--early-stop %u): no better held-out %s since %s (%s)\n",
                s.stopped_early_at.c_str(), cfg.early_stop, s.best->metric.c_str(), s.best_at.c_str(),
                app::held_out_text(s.best->metric, s.best->value).c_str());
  else if (s.best)
    std::printf("  best held-out evaluation: %s, %s\n", s.best_at.c_str(),
                app::held_out_text(s.best->metric, s.best->value).c_str());
  if (s.ranks > 1)
    std::printf("  data parallel over %u ranks: all-reduce %.3f ms and %.1f KiB per step (fp32 gradients and losses), "
                "%llu host waits for it, %llu for replica checks\n",
                s.ranks, s.allreduce_ms_per_step, double(s.allreduce_bytes_per_step) / 1024,
                static_cast<unsigned long long>(s.host_waits_for_allreduce),
                static_cast<unsigned long long>(s.host_waits_for_replica_checks));
  std::printf("  GPU time per step %.2f ms, of which the AMP check and scale update %.2f ms (%.1f%%)\n",
              s.gpu_ms_per_step, s.amp_ms_per_step,
              s.gpu_ms_per_step > 0 ? 100 * s.amp_ms_per_step / s.gpu_ms_per_step : 0.0);
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
  const graph::MemoryReport mem = trainer.model().memory();
  auto mib = [](uint64_t b) { return double(b) / (1 << 20); };
  std::string by_format;
  for (const auto& [f, bytes] : mem.activations_by_format) {
    char part[64];
    std::snprintf(part, sizeof part, "%s%s %.2f", by_format.empty() ? "" : ", ", format_name(f), mib(bytes));
    by_format += part;
  }
  std::printf("  device memory (MiB): parameters %.2f, optimizer state %.2f, activations %.2f (%.2f without reuse: "
              "%s), workspace %.2f, training data %.2f (%s)\n",
              mib(mem.parameters), mib(mem.optimizer_state), mib(mem.activations), mib(mem.activations_unshared),
              by_format.c_str(), mib(mem.workspace), mib(trainer.data_device_bytes()),
              trainer.data_resident() ? "resident" : "a staging ring; the set streams from host memory");
}

int classifier_sample_main(const char* workload, const char* about, int argc, char** argv) {
  const app::Workload& job = app::find_workload(workload);
  return sample_main({workload, about}, job.defaults, argc, argv, [&](app::RunOptions& cfg, Context& ctx) {
    app::Datasets data = job.load(cfg);
    app::ModelSource model = app::job_model(job, cfg, data);
    // A model string (fashion_mlp, lenet5), or the graph's origin where the job builds one (resnet).
    const std::string model_name = job.graph ? model.graph.origin() : job.model;
    const std::unique_ptr<train::Trainer> made = app::make_trainer(ctx, cfg, std::move(model), job.loss, data.train);
    train::Trainer& trainer = *made;
    init_weights_from_file(cfg, trainer);
    trainer.set_held_out(data.test);
    const int ranks = dist::Communicator::world().size();
    const std::string batch = std::to_string(cfg.batch) + (ranks > 1 ? " x " + std::to_string(ranks) + " ranks" : "");
    if (!cfg.quiet)
      std::printf("%s: %s (%llu parameters), %u train / %u test images, batch %s, %s, %s\n",
                  workload, model_name.c_str(), static_cast<unsigned long long>(trainer.model().param_count()),
                  data.train.count, data.test.count, batch.c_str(), app::run_length_text(cfg, trainer.budget()).c_str(),
                  describe_run(cfg).c_str());
    ui::RunHistory history;
    const RunResult s = train_with_progress(trainer, cfg, workload, {}, &history);
    if (s.failed) {
      write_report(cfg, history);
      return report_failure(workload, cfg, s);
    }
    if (s.suggested) return 0;
    const double acc = final_held_out(trainer, cfg, history, data.test);
    std::printf("test accuracy %.2f%%\n", 100 * acc);
    print_run_report(cfg, trainer, s);
    write_report(cfg, history);
    save_weights(cfg, trainer, s);
    return 0;
  });
}

void print_summary(const config::TrainConfig& cfg, const train::TrainSummary& s) {
  std::printf("  %-34s steps %u (applied %u, skipped %u, overflows %u), final scale %g, last loss %.4g, "
              "%.0f samples/s\n",
              describe_run(cfg).c_str(), s.steps, s.applied, s.skipped, s.overflows, s.final_scale,
              s.last_loss, s.samples_per_second);
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

}  // namespace vkamp::samples
