#include "app/workloads.hpp"

#include "app/charlm.hpp"
#include "app/data_paths.hpp"
#include "app/user_data.hpp"
#include "vkamp/data/dataset.hpp"
#include "vkamp/models/resnet.hpp"
#include "app/fashion_mnist.hpp"
#include "app/saved_model.hpp"

namespace vkamp::app {

using data::HostData;
using train::LossKind;
namespace {

Datasets fashion_mnist(const RunOptions& cfg) {
  std::string dir = cfg.data_dir.empty() ? default_fashion_mnist_dir() : cfg.data_dir;
  return {HostData::classification(app::load_fashion_mnist(dir, false)),
          HostData::classification(app::load_fashion_mnist(dir, true))};
}

Workload fashion_mlp() {
  Workload w{"fashion_mlp", "784-256-256-10 ReLU MLP on Fashion-MNIST, momentum SGD", "784-256r-256r-10",
             LossKind::SoftmaxXent, RunOptions{}, fashion_mnist};
  w.defaults.batch = 128;
  w.defaults.epochs = 2;
  w.defaults.optimizer.lr = 0.05;
  w.defaults.optimizer.momentum = 0.9;
  return w;
}

// LeNet-5 in NHWC (Fashion-MNIST's row-major 28x28 bytes are already a
// 28x28x1 image): conv 5x5 to 6 channels with padding 2, max pool 2, conv
// 5x5 to 16, max pool 2, then 120-84-10, ReLU throughout.
Workload lenet5() {
  Workload w{"lenet5", "LeNet-5 (two 5x5 convs, max pooling, 120-84-10) on Fashion-MNIST, momentum SGD",
             "28x28x1-c6k5p2r-m2-c16k5r-m2-f-120r-84r-10", LossKind::SoftmaxXent, RunOptions{}, fashion_mnist};
  w.defaults.batch = 64;
  w.defaults.epochs = 2;
  w.defaults.optimizer.lr = 0.05;
  w.defaults.optimizer.momentum = 0.9;
  // Annealing to 0 over the run gave more test accuracy after two epochs
  // than a constant rate, with less spread between seeds (bench/NOTES.md).
  w.defaults.optimizer.schedule = config::LrSchedule::Cosine;
  return w;
}

// A small ResNet with BatchNorm (models/resnet.hpp): the recipe of He et
// al.'s CIFAR runs (momentum SGD, weight decay 5e-4, cosine annealing) at a
// size whose default run ends within 10 minutes on lavapipe with 2 cores
// (bench/NOTES.md, "Issue 23: resnet").
models::ResNetConfig resnet_config() {
  models::ResNetConfig c;
  c.widths = {8, 16, 32};
  c.blocks = 1;
  c.stem_stride = 2;
  return c;
}

Workload resnet() {
  Workload w{"resnet",
             "ResNet (conv-BN-ReLU stem, residual blocks with BatchNorm at 8/16/32, global average pool) on "
             "Fashion-MNIST, momentum SGD with weight decay and a cosine schedule",
             "", LossKind::SoftmaxXent, RunOptions{}, fashion_mnist};
  w.graph = [](const RunOptions&, const Datasets&) { return models::resnet_graph(resnet_config()); };
  RunOptions& o = w.defaults;
  o.batch = 128;
  o.epochs = 2;
  o.optimizer.lr = 0.1;
  o.optimizer.momentum = 0.9;
  o.optimizer.weight_decay = 5e-4;
  o.optimizer.schedule = config::LrSchedule::Cosine;
  o.save_path = "resnet.safetensors";  // exported at the end, PyTorch's names (--save '' skips it)
  return w;
}

// Targets 1e-4 times a random linear map: the unscaled fp16 gradients of
// this regression underflow, the loss-scaling literature's example.
Workload linreg() {
  Workload w{"linreg", "16-feature linear regression with targets ~1e-4 (fp16 underflow)", "16-1", LossKind::MSE,
             RunOptions{}, [](const RunOptions& cfg) {
               data::RegressionData reg = data::make_regression(4096, 16, cfg.seed);
               HostData data{reg.count, reg.features, reg.x, {}, reg.y};
               for (float& y : data.targets) y *= 1e-4f;
               return Datasets{data, {}};
             }};
  w.defaults.batch = 256;
  w.defaults.epochs = 40;
  w.defaults.optimizer.lr = 0.5;
  w.defaults.optimizer.momentum = 0.0;
  w.defaults.scaler.histogram_interval = 16;
  return w;
}

// nanoGPT-style recipe (AdamW with decay on matrices, warmup then cosine,
// clipping at 1.0) at the tiny size, measured on lavapipe (bench/NOTES.md).
Workload charlm() {
  Workload w{"charlm", "character-level GPT on the fortunes text (or --text FILE), AdamW", "", LossKind::SoftmaxXent,
             RunOptions{}, [](const RunOptions& cfg) {
               CharCorpus corpus = load_corpus(cfg.lm);
               CharWindows win = char_windows(corpus, gpt_config(cfg.lm, uint32_t(corpus.vocab.size())).block_size);
               return Datasets{std::move(win.train), std::move(win.val), "", corpus.vocab};
             }};
  w.graph = [](const RunOptions& cfg, const Datasets& d) {
    return models::gpt_graph(gpt_config(cfg.lm, uint32_t(d.vocab.size())));
  };
  w.language_model = true;
  RunOptions& o = w.defaults;
  o.batch = 16;
  o.epochs = 1;        // an epoch is every offset of the text: --max-steps sets the run's length
  o.max_steps = 3000;  // about 7 minutes on lavapipe with 2 cores (bench/NOTES.md)
  o.eval_every = 500;
  // 800 of the validation text's ~4,000 windows, spread over it: each
  // evaluation takes a fifth of the time, its loss within about 0.01 nats
  // of the whole text's. The final loss reads all of it.
  o.eval_iters = 50;
  o.optimizer.kind = config::OptimizerKind::AdamW;
  o.optimizer.lr = 3e-3;
  o.optimizer.beta2 = 0.95;
  o.optimizer.weight_decay = 0.1;
  o.optimizer.decay_vectors = false;
  o.optimizer.schedule = config::LrSchedule::Cosine;
  o.optimizer.warmup_steps = 100;
  o.clip.max_norm = 1.0;
  return w;
}

}  // namespace

const std::vector<Workload>& workloads() {
  static const std::vector<Workload> all{fashion_mlp(), lenet5(), resnet(), linreg(), charlm()};
  return all;
}

ModelSource job_model(const Workload& job, const RunOptions& opts, const Datasets& data) {
  if (job.graph) return {job.graph(opts, data), std::nullopt};
  return load_model(data.model.empty() ? job.model : data.model);
}

const Workload& find_workload(const std::string& name) {
  std::string known;
  for (const Workload& w : workloads()) {
    if (w.name == name) return w;
    known += (known.empty() ? "" : ", ") + w.name;
  }
  throw vkamp::ConfigError("unknown sample \"" + name + "\" (choose one of: " + known + ")");
}

std::map<std::string, std::string> user_data_metadata(const std::string& model, const DataOptions& d,
                                                      const UserData& u) {
  SavedModel saved{model, d.regress, u.classes, u.standardizer, u.feature_names, "", {}};
  // The columns by name, so vkamp-predict finds them in a CSV with or without labels.
  saved.target_standardizer = u.target_standardizer;
  if (d.regress) saved.targets = u.target_names;
  else if (!u.target_names.empty()) saved.label = u.target_names[0];
  return metadata_of(saved);
}

void check_savable(const std::string& model, const RunOptions& opts) {
  if (is_model_file(model) && !opts.save_path.empty())
    throw vkamp::ConfigError("--save writes PyTorch names and layouts, which vkamp derives from a model string; "
                             "a YAML model file cannot be saved yet");
}

RunOptions user_data_defaults() {
  RunOptions o;
  o.optimizer.kind = config::OptimizerKind::Adam;
  o.optimizer.lr = 1e-3;
  o.batch = 64;
  o.epochs = 10;
  return o;
}

Workload user_data_workload(const RunOptions& opts) {
  Workload w{"vkamp-train", "your data: " + opts.data.train_path, opts.data.model,
             opts.data.regress ? LossKind::MSE : LossKind::SoftmaxXent, user_data_defaults(),
             [](const RunOptions& cfg) {
               UserData u = load_user_data(cfg.data, cfg.seed);
               check_value_range(u, cfg.data, cfg.precision);
               const std::string model = cfg.data.model.empty() ? default_model(u) : cfg.data.model;
               check_savable(model, cfg);
               Datasets d{std::move(u.train), std::move(u.test), model};
               d.metadata = user_data_metadata(model, cfg.data, u);
               return d;
             }};
  return w;
}

}  // namespace vkamp::app
