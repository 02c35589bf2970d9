// Trains a small MLP on two interleaved spirals in fp16 with dynamic loss
// scaling, using only vkamp's installed headers, and prints its accuracy on
// held-out points. Exits 1 if the accuracy is too low to mean it learned.
//
//   train_mlp [--device SEL] [--epochs N]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numbers>
#include <random>
#include <string>

#include "vkamp/context.hpp"
#include "vkamp/config/train_config.hpp"
#include "vkamp/models/model_spec.hpp"
#include "vkamp/train/trainer.hpp"

namespace {

// Two spirals, one per class, each a half-turn apart from the other:
// not linearly separable, so the hidden layers have to do the work.
vkamp::data::HostData make_spirals(uint32_t per_class, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> along(0.1f, 1.0f);
  std::normal_distribution<float> noise(0.0f, 0.02f);
  vkamp::data::HostData data;
  data.count = 2 * per_class;
  data.features = 2;
  for (uint32_t i = 0; i < per_class; ++i) {
    for (uint32_t label = 0; label < 2; ++label) {
      const float t = along(rng);  // radius and how far round the spiral
      const float angle = 3.0f * std::numbers::pi_v<float> * t + label * std::numbers::pi_v<float>;
      data.x.push_back(t * std::cos(angle) + noise(rng));
      data.x.push_back(t * std::sin(angle) + noise(rng));
      data.labels.push_back(label);
    }
  }
  return data;
}

}  // namespace

int main(int argc, char** argv) {
  vkamp::config::TrainConfig cfg;
  cfg.precision = vkamp::Format::F16;
  cfg.scaler.mode = vkamp::config::LossScaleMode::Dynamic;
  cfg.optimizer.kind = vkamp::config::OptimizerKind::Adam;
  cfg.optimizer.lr = 0.01;
  cfg.batch = 64;
  cfg.epochs = 40;
  vkamp::ContextOptions options;  // the device: an application choice, not a training setting
  for (int i = 1; i < argc; i += 2) {
    const bool has_value = i + 1 < argc;
    if (has_value && std::strcmp(argv[i], "--device") == 0) {
      options.device = argv[i + 1];
    } else if (has_value && std::strcmp(argv[i], "--epochs") == 0 && std::atoi(argv[i + 1]) > 0) {
      cfg.epochs = uint32_t(std::atoi(argv[i + 1]));
    } else {
      std::fprintf(stderr, "usage: %s [--device SEL] [--epochs N]\n", argv[0]);
      return 2;
    }
  }
  const double kPassAccuracy = 0.90;  // chance is 0.50

  try {
    vkamp::Context ctx(options);
    std::printf("device: %s\n", ctx.info().name.c_str());

    const vkamp::data::HostData train = make_spirals(1000, 1);
    const vkamp::data::HostData test = make_spirals(500, 2);
    vkamp::train::Trainer trainer(ctx, cfg, vkamp::models::parse_model("2-64r-64r-2"),
                                  vkamp::train::LossKind::SoftmaxXent, train);
    const vkamp::train::TrainSummary summary = trainer.run();
    if (summary.failed) {
      std::fprintf(stderr, "train_mlp: training stopped: %s\n", summary.failure.c_str());
      return 1;
    }
    const double accuracy = trainer.evaluate(test);
    std::printf("steps %u (skipped %u), final loss scale %g, last loss %.4f\n", summary.steps, summary.skipped,
                summary.final_scale, summary.last_loss);
    std::printf("test accuracy %.2f%% (pass: %.0f%%)\n", 100 * accuracy, 100 * kPassAccuracy);
    return accuracy >= kPassAccuracy ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_mlp: %s\n", e.what());
    return 1;
  }
}
