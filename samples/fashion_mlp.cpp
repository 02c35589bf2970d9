// fashion_mlp: trains a 784-256-256-10 ReLU MLP on Fashion-MNIST in mixed
// precision (fp16 with dynamic loss scaling by default) and reports test
// accuracy, skipped steps and the final loss scale.
#include <cstdio>

#include "sample_main.hpp"
#include "vkamp/train/checkpoint_file.hpp"
#include "vkamp/train/dataset.hpp"

using namespace vkamp;

int main(int argc, char** argv) {
  train::TrainConfig cfg;
  cfg.batch = 128;
  cfg.epochs = 2;
  cfg.optimizer.lr = 0.05;
  cfg.optimizer.momentum = 0.9;
  samples::SampleInfo info{"fashion_mlp",
                           "Trains a 784-256-256-10 ReLU MLP on Fashion-MNIST (Debian package\n"
                           "dataset-fashion-mnist, or --data DIR with the IDX files) with momentum SGD,\n"
                           "in fp16 with dynamic loss scaling unless told otherwise, then reports the\n"
                           "test accuracy, the skipped steps and the final loss scale."};
  return samples::sample_main(info, cfg, argc, argv, [](train::TrainConfig& cfg, Context& ctx) {
    std::string dir = cfg.data_dir.empty() ? train::kDefaultFashionMnistDir : cfg.data_dir;
    auto train_set = train::HostData::classification(train::load_fashion_mnist(dir, false));
    auto test_set = train::HostData::classification(train::load_fashion_mnist(dir, true));
    train::Trainer trainer(ctx, cfg, train::parse_model("784-256r-256r-10"), train::LossKind::SoftmaxXent,
                           train_set);
    std::printf("fashion_mlp: 784-256-256-10, %u train / %u test images, batch %u, %u epochs (%u steps), %s\n",
                train_set.count, test_set.count, cfg.batch, cfg.epochs, trainer.budget(),
                samples::describe_run(cfg).c_str());
    train::TrainSummary s = samples::train_with_progress(trainer, cfg, "fashion_mlp");
    if (s.failed) return samples::report_failure("fashion_mlp", cfg, s);
    double acc = trainer.evaluate(test_set);
    std::printf("test accuracy %.2f%%\n", 100 * acc);
    samples::print_summary(cfg, s);
    std::printf("  GPU time per step %.2f ms, of which the AMP check and scale update %.2f ms (%.1f%%)\n",
                s.gpu_ms_per_step, s.amp_ms_per_step,
                s.gpu_ms_per_step > 0 ? 100 * s.amp_ms_per_step / s.gpu_ms_per_step : 0.0);
    std::printf("  by kernel (ms/step):");
    for (auto& [label, ms] : s.kernel_ms_per_step) std::printf(" %s %.2f", label.c_str(), ms);
    std::printf("\n");
    return 0;
  });
}
