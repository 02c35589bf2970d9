// linreg_underflow: the linear-regression demonstration of why loss scaling
// exists. The targets are small (y = 1e-4 (x.w + b)), so as the fit improves
// the fp16 gradients fall below fp16's smallest subnormal (6e-8) and flush
// to zero: without scaling the loss stalls; with scaling fp16 keeps
// learning, down to the resolution fp16 has for the targets themselves.
// Three runs side by side, on the same data, seed and schedule.
#include <cmath>
#include <cstdio>
#include <vector>

#include "sample_main.hpp"

#include "app/workloads.hpp"
#include "vkamp/platform.hpp"

using namespace vkamp;

namespace {

struct Run {
  app::RunOptions cfg;
  std::vector<float> loss;         // per step
  double zero_fraction = 0;        // of fc1.weight's gradients, last histogram
  samples::RunResult summary;
};

void train_run(Context& ctx, Run& r, const data::HostData& data, app::RunHistory* history = nullptr) {
  auto spec = models::parse_model("16-1");
  spec.init = graph::Init::Zero;
  train::Trainer trainer(ctx, r.cfg, spec, train::LossKind::MSE, data);
  samples::init_weights_from_file(r.cfg, trainer);  // every run starts from the same weights
  samples::Observers obs;
  obs.step = [&](const train::StepMetrics& m) { r.loss.push_back(m.loss); };
  obs.histogram = [&](const train::TensorHistogram& h) {
    if (h.tensor != "fc1.weight") return;
    double total = 0;
    for (uint32_t b : h.bins) total += b;
    r.zero_fraction = total > 0 ? h.bins[train::kHistZero] / total : 0;
  };
  r.summary = samples::train_with_progress(trainer, r.cfg, samples::describe_run(r.cfg), obs, history);
  if (!r.summary.failed) samples::save_weights(r.cfg, trainer, r.summary);
}

// Mean loss over the last `n` steps: the level a run has settled at.
double settled(const std::vector<float>& loss, size_t n) {
  n = std::min(n, loss.size());
  double s = 0;
  for (size_t i = loss.size() - n; i < loss.size(); ++i) s += loss[i];
  return n ? s / double(n) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  vkamp::platform::utf8_arguments(argc, argv);
  const app::Workload& job = app::find_workload("linreg");
  app::RunOptions cfg = job.defaults;
  samples::SampleInfo info{
      "linreg_underflow",
      "Linear regression on y = 1e-4 (x.w + b), x uniform in [-1, 1]^16, 4096 examples,\n"
      "from zero weights. Trains three times on the same data: fp32; --precision\n"
      "(default fp16) without loss scaling; and --precision with --loss-scale (default\n"
      "dynamic; 'none' is taken as dynamic here). Without scaling the fp16 gradients\n"
      "underflow and the loss stalls; with scaling fp16 follows fp32 down to fp16's own\n"
      "resolution of the targets. --metrics FILE and --report FILE.png show the scaled run."};
  return samples::sample_main(info, cfg, argc, argv, [&](app::RunOptions& cfg, Context& ctx) {
    data::HostData data = job.load(cfg).train;

    Run runs[3];
    for (Run& r : runs) r.cfg = cfg;
    runs[0].cfg.precision = Format::F32;
    runs[0].cfg.scaler.mode = config::LossScaleMode::None;
    runs[1].cfg.scaler.mode = config::LossScaleMode::None;
    if (cfg.scaler.mode == config::LossScaleMode::None) runs[2].cfg.scaler.mode = config::LossScaleMode::Dynamic;
    runs[0].cfg.metrics_path.clear();
    runs[1].cfg.metrics_path.clear();
    runs[0].cfg.save_path.clear();  // --save, like --report, keeps the scaled run
    runs[1].cfg.save_path.clear();
    app::RunHistory scaled;  // --report draws the scaled run
    for (Run& r : runs) {
      train_run(ctx, r, data, &r == &runs[2] ? &scaled : nullptr);
      if (r.summary.failed) return samples::report_failure("linreg_underflow", r.cfg, r.summary);
    }

    std::printf("linreg_underflow: 16 -> 1 linear, MSE, 4096 examples, batch %u, %u epochs, SGD lr %g\n\n",
                cfg.batch, cfg.epochs, cfg.optimizer.lr);
    std::printf("%8s %16s %16s %16s\n", "step", "fp32", runs[1].cfg.precision == Format::F32 ? "fp32" : "no scaling",
                "loss scaling");
    size_t n = runs[0].loss.size();
    for (size_t i = 0; i < n; i += std::max<size_t>(1, n / 12)) {
      std::printf("%8zu", i);
      for (Run& r : runs) std::printf(" %16.4e", i < r.loss.size() ? r.loss[i] : NAN);
      std::printf("\n");
    }
    double l32 = settled(runs[0].loss, 32), lno = settled(runs[1].loss, 32), lsc = settled(runs[2].loss, 32);
    // The best a 16-bit run can do: the targets themselves, rounded.
    double floor16 = 0;
    for (float y : data.targets) floor16 += std::pow(double(round_to(cfg.precision, y)) - y, 2);
    floor16 /= data.targets.size();
    std::printf("\nsettled loss (mean of the last 32 steps); first step %.4e\n", runs[0].loss.at(0));
    std::printf("  %-40s %.4e\n", samples::describe_run(runs[0].cfg).c_str(), l32);
    std::printf("  %-40s %.4e  (MSE of the targets rounded to %s)\n", "resolution floor", floor16,
                format_name(cfg.precision));
    std::printf("  %-40s %.4e  (%.0fx the floor), %.0f%% of fc1.weight gradients exactly zero\n",
                samples::describe_run(runs[1].cfg).c_str(), lno, lno / floor16, 100 * runs[1].zero_fraction);
    std::printf("  %-40s %.4e  (%.1fx the floor), %.0f%% zero, final scale %g, %u skipped; the scale saved "
                "%.1f%% of the gradients (lost unscaled, mean over the steps)\n",
                samples::describe_run(runs[2].cfg).c_str(), lsc, lsc / floor16, 100 * runs[2].zero_fraction,
                runs[2].summary.final_scale, runs[2].summary.skipped,
                100 * runs[2].summary.underflow.lost_unscaled_mean);
    scaled.eval_name = "";
    samples::write_report(runs[2].cfg, scaled);
    bool stalled = lno > 100 * floor16, tracks = lsc < 20 * floor16;
    std::printf("\n%s\n%s\n",
                stalled ? "without scaling the loss stalls far above the floor: the gradients flush to zero"
                        : "note: the unscaled run did not stall on this setting",
                tracks ? "with loss scaling it keeps falling, to within 20x of the floor"
                       : "note: the scaled run stopped short of the floor");
    return stalled && tracks ? 0 : 1;
  });
}
