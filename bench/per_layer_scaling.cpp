// per-layer-scaling-bench: a deliberately hard case for one
// loss scale, a deep narrow tanh MLP started with small weights, whose early
// layers' gradients are many binades below the last layer's. Trains it in
// fp32 (no scaling), fp16 with one dynamic scale, and fp16 with per-layer
// scaling, from the same weights and batches, and prints per run: the
// validation loss and accuracy, skipped steps, and the underflow of the
// stored 16-bit gradients (elements exactly zero or subnormal, as a share
// of all gradient elements and of the first layer's, over every step).
// Adam's eps defaults to 1e-20 here: with its usual 1e-8, Adam itself turns
// a gradient far below 1e-8 into a negligible update, in fp32 too, and the
// layers whose gradients fp16 loses would not train in any precision.
// bench/per_layer_scaling.sh runs it; bench/NOTES.md has the numbers.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "app/cli.hpp"
#include "vkamp/context.hpp"
#include "vkamp/data/dataset.hpp"
#include "vkamp/error.hpp"
#include "vkamp/train/trainer.hpp"
#include "vkamp/platform.hpp"

using namespace vkamp;

namespace {

struct Result {
  double val_loss = 0, val_acc = 0, underflow = 0, first_layer_underflow = 0;
  uint32_t skipped = 0;
  std::vector<train::LayerScaleReading> layers;
};

Result run(Context& ctx, Format fmt, config::LossScaleMode mode, const models::ModelSpec& spec,
           const data::HostData& train_set, const data::HostData& val, uint32_t epochs, double weight_std,
           double eps, double lr) {
  config::TrainConfig c;
  c.precision = fmt;
  c.batch = 64;
  c.epochs = epochs;
  c.seed = 1;
  c.optimizer.kind = config::OptimizerKind::Adam;
  c.optimizer.lr = lr;
  c.optimizer.eps = eps;
  c.scaler.mode = mode;
  c.scaler.histogram_interval = 0;
  train::Trainer t(ctx, c, spec, train::LossKind::SoftmaxXent, train_set);
  // Small weights, biases that keep the activations near 0.5 (the same for
  // every run: fixed seed).
  std::vector<float> w(t.model().param_elements(), 0.0f);
  std::mt19937 rng(7);
  std::normal_distribution<float> weight(0.0f, float(weight_std)), bias(0.0f, 0.6f);
  for (const auto& p : t.model().tensors())
    for (uint32_t i = 0; i < p.size; ++i) w[p.offset + i] = p.matrix ? weight(rng) : bias(rng);
  t.model().write_master(w);
  Result r;
  double elements = 0, under = 0, first = 0, first_under = 0;
  const uint32_t first_size = t.model().tensors()[0].size;
  t.on_step = [&](const train::StepMetrics& m) {
    if (m.skipped) ++r.skipped;
    elements += double(t.model().param_count());
    under += double(m.zeros) + m.subnormal;
  };
  t.on_tensor_underflow = [&](const train::TensorUnderflow& u) {
    first += first_size;
    first_under += double(u.stats[0].zeros) + u.stats[0].subnormal;
  };
  t.run();
  const train::Trainer::HeldOut h = t.held_out(val);
  r.val_loss = h.loss;
  r.val_acc = h.value;
  r.underflow = under / std::max(elements, 1.0);
  r.first_layer_underflow = first_under / std::max(first, 1.0);
  r.layers = t.read_layer_scales();
  return r;
}

}  // namespace

struct BenchOptions {
  uint32_t depth = 20;
  double weight_std = 0.1;
};

int main(int argc, char** argv) {
  vkamp::platform::utf8_arguments(argc, argv);
  // --epochs, --lr and Adam's --eps are the training rows (app/cli.hpp);
  // --depth and --weight-std this benchmark's own.
  BenchOptions opt;
  app::RunOptions train;
  train.epochs = 10;
  train.optimizer.lr = 1e-3;
  train.optimizer.eps = 1e-20;
  const BenchOptions opt_defaults = opt;
  const app::RunOptions train_defaults = train;
  using config::kGeneralGroup;
  static const std::vector<config::Setting<BenchOptions>> rows = {
      config::count<BenchOptions>("depth", {kGeneralGroup, "N", "tanh layers of width 8"}, VKAMP_FIELD(depth), 2),
      config::real<BenchOptions>("weight_std", {kGeneralGroup, "X", "the weights' initial standard deviation"},
                                 VKAMP_FIELD(weight_std), config::Range::above(0)),
  };
  std::vector<app::Flag> flags = app::bind_rows(rows, opt, opt_defaults);
  for (app::Flag& f : app::shared_flags(train, train_defaults, {"device", "epochs", "lr", "eps"})) flags.push_back(std::move(f));
  flags.back().names.push_back("adam-eps");  // its name in earlier runs of per_layer_scaling.sh
  const app::Program program{"per-layer-scaling-bench", "[flags]",
                             "One global loss scale against per-layer scaling on a deep narrow tanh MLP started with\n"
                             "small weights (bench/per_layer_scaling.sh; bench/NOTES.md has the numbers).",
                             false, ""};
  if (int status = app::parse_or_exit(program, argc, argv, flags); status >= 0) return status;
  const uint32_t depth = opt.depth, epochs = train.epochs;
  const double weight_std = opt.weight_std, eps = train.optimizer.eps, lr = train.optimizer.lr;
  try {
    ContextOptions copt;
    copt.device = train.device;
    Context ctx(copt);
    std::string model = "8";
    for (uint32_t l = 0; l + 1 < depth; ++l) model += "-8t";
    model += "-4";
    const models::ModelSpec spec = models::parse_model(model);
    auto all = data::HostData::classification(data::make_classification(2560, 8, 4, 3));
    const data::HostData train_set = all.rows(0, 2048), val = all.rows(2048, 512);
    std::printf("%u tanh layers of width 8 (%s), weights N(0, %g), biases N(0, 0.6); Adam lr %g eps %g, "
                "batch 64, %u epochs of 2048 examples; validation: 512 held-out examples\n",
                depth, model.c_str(), weight_std, lr, eps, epochs);
    std::printf("%-22s %9s %9s %8s %14s %18s\n", "run", "val loss", "val acc", "skipped", "underflow %",
                "layer-1 underflow %");
    struct Case {
      const char* name;
      Format fmt;
      config::LossScaleMode mode;
    };
    for (const Case& k : {Case{"fp32 (no scaling)", Format::F32, config::LossScaleMode::None},
                          Case{"fp16 dynamic", Format::F16, config::LossScaleMode::Dynamic},
                          Case{"fp16 per-layer", Format::F16, config::LossScaleMode::PerLayer}}) {
      const Result r = run(ctx, k.fmt, k.mode, spec, train_set, val, epochs, weight_std, eps, lr);
      std::printf("%-22s %9.4f %8.2f%% %8u %13.2f%% %17.2f%%\n", k.name, r.val_loss, 100 * r.val_acc, r.skipped,
                  100 * r.underflow, 100 * r.first_layer_underflow);
      if (!r.layers.empty()) {
        std::printf("  per-layer scales at the end (log2):");
        for (const auto& l : r.layers) std::printf(" %g", std::log2(double(l.scale)));
        std::printf("\n");
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "per-layer-scaling-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
