// Tiny models for the training tests. The tiny problem a Trainer runs on:
// a learnable classification of 6 features into 3 classes (the engine's
// make_classification), the model "6-5t-3", 8-row batches in fp16 with
// plain SGD and no histograms; a run that keeps every step's metrics; and
// the same run straight through and interrupted and resumed from its
// checkpoint (a test changes what it is about on a copy of tiny_config()).
// For reference tests: a data set that is exactly one batch (so every step
// sees the same examples and epochs = steps), and the softmax cross-entropy
// loss of a Linear/activation MLP with its gradient, computed on the CPU in
// double from the flat parameter layout of train::Model (a Linear weight is
// out x in, y = x W^T + b).
#pragma once
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "vkamp/context.hpp"
#include "vkamp/data/dataset.hpp"
#include "vkamp/models/model_spec.hpp"
#include "vkamp/train/model.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {

inline data::HostData tiny_data(uint32_t count, uint64_t seed) {
  return data::HostData::classification(data::make_classification(count, 6, 3, seed));
}

inline const models::ModelSpec& tiny_model() {
  static const models::ModelSpec spec = models::parse_model("6-5t-3");
  return spec;
}

inline config::TrainConfig tiny_config(Format fmt = Format::F16) {
  config::TrainConfig c;
  c.precision = fmt;
  c.batch = 8;
  c.epochs = 4;
  c.seed = 7;
  c.optimizer.lr = 0.1;
  c.optimizer.momentum = 0;
  c.scaler.histogram_interval = 0;
  return c;
}

// Runs `t` to its end; every step's metrics, in order.
inline std::vector<train::StepMetrics> run_steps(train::Trainer& t, train::TrainSummary* summary = nullptr) {
  std::vector<train::StepMetrics> out;
  t.on_step = [&](const train::StepMetrics& m) { out.push_back(m); };
  const train::TrainSummary s = t.run();
  if (summary) *summary = s;
  return out;
}

// `c` run straight through, and run again stopped after `first_epochs`
// with a checkpoint at `checkpoint`, then resumed from it to the end:
// what a test compares bit for bit.
struct StraightAndResumed {
  std::vector<train::StepMetrics> full, rest;  // rest: the resumed trainer's steps only
  std::vector<float> full_weights, rest_weights;  // the master weights at the end
};

inline StraightAndResumed run_straight_and_resumed(Context& ctx, const config::TrainConfig& c,
                                                   const models::ModelSpec& spec, const data::HostData& data,
                                                   uint32_t first_epochs, const std::string& checkpoint) {
  StraightAndResumed out;
  {
    train::Trainer t(ctx, c, spec, train::LossKind::SoftmaxXent, data);
    out.full = run_steps(t);
    out.full_weights = t.model().read_master();
  }
  config::TrainConfig first = c;
  first.epochs = first_epochs;
  first.checkpoint_path = checkpoint;
  {
    train::Trainer t(ctx, first, spec, train::LossKind::SoftmaxXent, data);
    run_steps(t);
  }
  config::TrainConfig second = c;
  second.checkpoint_path = checkpoint;
  second.resume = true;
  train::Trainer t(ctx, second, spec, train::LossKind::SoftmaxXent, data);
  out.rest = run_steps(t);
  out.rest_weights = t.model().read_master();
  return out;
}

inline data::HostData one_batch_classification(uint32_t count, uint32_t features, uint32_t classes,
                                                uint64_t seed) {
  return data::HostData::classification(data::make_classification(count, features, classes, seed));
}

// Mean softmax cross-entropy over all rows of `data`, and its gradient with
// respect to every parameter (grad has w's size; padding stays 0).
inline double mlp_xent_grad(const models::ModelSpec& spec, const std::vector<graph::ParamTensor>& tensors,
                            const std::vector<double>& w, const data::HostData& data, std::vector<double>& grad) {
  grad.assign(w.size(), 0.0);
  const uint32_t rows = data.count;
  // acts[l]: the input of linear layer l (rows x width), after its activation.
  std::vector<std::vector<double>> acts(1, std::vector<double>(data.x.begin(), data.x.end()));
  std::vector<uint32_t> widths{spec.inputs()};
  for (size_t l = 0; l < spec.layers.size(); ++l) {
    const auto& L = spec.layers[l];
    if (L.kind != models::LayerKind::Linear) throw std::logic_error("mlp_xent_grad: Linear layers only");
    const uint32_t in = widths.back(), out = L.out;
    const double* W = &w[tensors[2 * l].offset];
    const double* b = &w[tensors[2 * l + 1].offset];
    std::vector<double> z(size_t(rows) * out);
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t o = 0; o < out; ++o) {
        double s = b[o];
        for (uint32_t i = 0; i < in; ++i) s += acts.back()[size_t(r) * in + i] * W[size_t(o) * in + i];
        if (L.activate && L.act == ops::Activation::Tanh) s = std::tanh(s);
        else if (L.activate && L.act == ops::Activation::ReLU) s = std::max(s, 0.0);
        else if (L.activate) throw std::logic_error("mlp_xent_grad: tanh or ReLU only");
        z[size_t(r) * out + o] = s;
      }
    acts.push_back(std::move(z));
    widths.push_back(out);
  }
  // d(mean loss)/d logits = (softmax - onehot) / rows.
  const uint32_t C = widths.back();
  std::vector<double> dy(size_t(rows) * C);
  double loss = 0;
  for (uint32_t r = 0; r < rows; ++r) {
    const double* z = &acts.back()[size_t(r) * C];
    double mx = z[0];
    for (uint32_t c = 1; c < C; ++c) mx = std::max(mx, z[c]);
    double sum = 0;
    for (uint32_t c = 0; c < C; ++c) sum += std::exp(z[c] - mx);
    loss += mx + std::log(sum) - z[data.labels[r]];
    for (uint32_t c = 0; c < C; ++c)
      dy[size_t(r) * C + c] = (std::exp(z[c] - mx) / sum - (c == data.labels[r] ? 1.0 : 0.0)) / rows;
  }
  for (size_t l = spec.layers.size(); l-- > 0;) {
    const auto& L = spec.layers[l];
    const uint32_t in = widths[l], out = widths[l + 1];
    const std::vector<double>& a_out = acts[l + 1];
    if (L.activate)  // dy becomes the gradient before the activation
      for (size_t k = 0; k < dy.size(); ++k)
        dy[k] *= L.act == ops::Activation::Tanh ? 1.0 - a_out[k] * a_out[k] : (a_out[k] > 0 ? 1.0 : 0.0);
    double* gW = &grad[tensors[2 * l].offset];
    double* gb = &grad[tensors[2 * l + 1].offset];
    const double* W = &w[tensors[2 * l].offset];
    std::vector<double> dx(size_t(rows) * in, 0.0);
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t o = 0; o < out; ++o) {
        const double d = dy[size_t(r) * out + o];
        gb[o] += d;
        for (uint32_t i = 0; i < in; ++i) {
          gW[size_t(o) * in + i] += d * acts[l][size_t(r) * in + i];
          dx[size_t(r) * in + i] += d * W[size_t(o) * in + i];
        }
      }
    dy = std::move(dx);
  }
  return loss / rows;
}

}  // namespace vkamp::test
