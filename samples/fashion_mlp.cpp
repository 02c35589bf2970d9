// fashion_mlp: trains a 784-256-256-10 ReLU MLP on Fashion-MNIST in mixed
// precision (fp16 with dynamic loss scaling by default) and reports test
// accuracy, skipped steps and the final loss scale.
#include <cstdio>

#include "sample_main.hpp"
#include "vkamp/train/checkpoint_file.hpp"
#include "vkamp/train/dataset.hpp"
#include "vkamp/train/workloads.hpp"

using namespace vkamp;

int main(int argc, char** argv) {
  const train::Workload& job = train::find_workload("fashion_mlp");
  samples::SampleInfo info{"fashion_mlp",
                           "Trains a 784-256-256-10 ReLU MLP on Fashion-MNIST (Debian package\n"
                           "dataset-fashion-mnist, or --data DIR with the IDX files) with momentum SGD,\n"
                           "in fp16 with dynamic loss scaling unless told otherwise, then reports the\n"
                           "test accuracy, the skipped steps and the final loss scale."};
  return samples::sample_main(info, job.defaults, argc, argv, [&](train::TrainConfig& cfg, Context& ctx) {
    train::Datasets data = job.load(cfg);
    train::Trainer trainer(ctx, cfg, train::parse_model(job.model), job.loss, data.train);
    std::printf("fashion_mlp: 784-256-256-10, %u train / %u test images, batch %u, %u epochs (%u steps), %s\n",
                data.train.count, data.test.count, cfg.batch, cfg.epochs, trainer.budget(),
                samples::describe_run(cfg).c_str());
    ui::RunHistory history;
    train::TrainSummary s = samples::train_with_progress(trainer, cfg, "fashion_mlp", {}, &history);
    if (s.failed) {
      samples::write_report(cfg, history);
      return samples::report_failure("fashion_mlp", cfg, s);
    }
    double acc = trainer.evaluate(data.test);
    history.evals.push_back({s.steps, acc});
    std::printf("test accuracy %.2f%%\n", 100 * acc);
    samples::print_summary(cfg, s);
    std::printf("  GPU time per step %.2f ms, of which the AMP check and scale update %.2f ms (%.1f%%)\n",
                s.gpu_ms_per_step, s.amp_ms_per_step,
                s.gpu_ms_per_step > 0 ? 100 * s.amp_ms_per_step / s.gpu_ms_per_step : 0.0);
    std::printf("  by kernel (ms/step):");
    for (auto& [label, ms] : s.kernel_ms_per_step) std::printf(" %s %.2f", label.c_str(), ms);
    std::printf("\n");
    samples::write_report(cfg, history);
    return 0;
  });
}
