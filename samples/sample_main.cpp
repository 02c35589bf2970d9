#include "sample_main.hpp"

#include <cerrno>
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
#include "vkamp/train/underflow_scope.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::samples {
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
  if (!std::freopen(platform::null_device(), "w", stdout)) std::fprintf(stderr, "%scannot silence stdout\n", comm.prefix().c_str());
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
    std::string dir = platform::utf8_from_path(platform::path_from_utf8(*path).parent_path());
    if (dir.empty()) dir = ".";
    if (std::string why; !platform::can_write_into(dir, &why)) {
      if (speaks)
        std::fprintf(stderr, "%s: %s %s: cannot write into %s: %s\n", info.name, flag, path->c_str(), dir.c_str(),
                     why.c_str());
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
  // No usable device, or a bad kernel-path variable: exit 2, saying which.
  auto no_context = [&](const std::exception& e) {
    if (comm.distributed()) return fail(vkamp::ConfigError(e.what()));
    std::fprintf(stderr, "%s: %s\n", info.name, e.what());
    return 2;
  };
  std::unique_ptr<Context> ctx;
  try {
    ContextOptions opt;
    opt.device = cfg.device;
    opt.plan_only = cfg.dry_run;
    // Unless --device or $VKAMP_DEVICE says otherwise, the ranks of one
    // machine take its GPUs in turn.
    if (comm.distributed()) opt.local_rank = comm.local_rank();
    ctx = std::make_unique<Context>(opt);
  } catch (const Error& e) {
    return no_context(e);
  } catch (const vkamp::ConfigError& e) {
    return no_context(e);
  }
  const GemmMma mma = ctx->gemm_mma();
  if (!cfg.quiet)
    std::fprintf(stderr, "%s%s on %s (%s%s)\n", who.c_str(), info.name, ctx->info().name.c_str(),
                 precision_path_name(ctx->path()),
                 mma == GemmMma::coopmat && ctx->gemm_mma_auto()
                     ? "; fp16 GEMMs on the tuner's kernels (the shader GEMM unless tuned on this device)"
                 : mma == GemmMma::coopmat ? (ctx->coopmat_api() == vkamp::CoopmatApi::khr
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
                              const Observers& also, app::RunHistory* history) {
  if (history) {
    history->title = label + " · " + describe_run(cfg);
    history->samples_per_step = cfg.batch * cfg.grad_accum * uint32_t(dist::Communicator::world().size());
    history->budget = trainer.budget();
    history->histogram_interval = config::histogram_interval_for(cfg.scaler);
    history->precision = cfg.precision;
    history->gradients = train::underflow_scope(cfg.precision, trainer.model().tensors());
    history->status = "training";
  }
  // The dashboard's history listens beside the caller's observers.
  app::RunHooks hooks;
  hooks.step = [&](const train::StepMetrics& m) {
    if (history) history->add(m);
    if (also.step) also.step(m);
  };
  hooks.histogram = [&](const train::TensorHistogram& h) {
    if (history) history->add(h);
    if (also.histogram) also.histogram(h);
  };
  hooks.tensor_underflow = [&](const train::TensorUnderflow& u) {
    if (history) history->add(u);
    if (also.tensor_underflow) also.tensor_underflow(u);
  };
  hooks.epoch_end = [&](const train::EpochEnd& e) {
    if (history && !e.metric.empty()) history->evals.push_back({e.step, e.value, e.epoch, e.metric});
    if (also.epoch_end) also.epoch_end(e);
  };
  app::RunLoop loop(trainer, cfg, label, hooks);
  RunResult result = loop.run();
  if (history) history->status = result.failed ? "stopped: " + result.failure : "finished";
  return result;
}

void write_report(const app::RunOptions& cfg, const app::RunHistory& history) {
  if (cfg.report_path.empty()) return;
  app::write_report_picture(history, cfg.report_path, cfg.device);
  std::printf("  dashboard picture written to %s\n", cfg.report_path.c_str());
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
                  data.train.count, data.test.count, batch.c_str(), app::run_length_text(trainer).c_str(),
                  describe_run(cfg).c_str());
    if (cfg.dry_run) return report_dry_run(workload, trainer);
    app::RunHistory history;
    const RunResult s = train_with_progress(trainer, cfg, workload, {}, &history);
    if (s.failed) {
      write_report(cfg, history);
      return report_failure(workload, cfg, s);
    }
    if (s.suggested) return 0;
    const double acc = app::final_held_out(trainer, s, data.test).value;
    std::printf("test accuracy %.2f%%\n", 100 * acc);
    print_run_report(cfg, trainer, s);
    write_report(cfg, history);
    save_weights(cfg, trainer, s);
    return 0;
  });
}

}  // namespace vkamp::samples
