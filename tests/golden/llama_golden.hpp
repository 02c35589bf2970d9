// What the Llama golden tests share (test_llama_golden.cpp: the committed
// toy checkpoints; test_vocab_golden.cpp: the real vocabularies): the error
// bounds of a forward, a gradient and a few AdamW steps, the LoRA fixture's
// settings, and the comparisons that print the [golden] lines.
//
// Bounds as in test_gpt_golden.cpp: fp32 errs by about sqrt(k) u32 per sum
// of k terms on a value's path; each 16-bit stage (a value stored in the
// format: working weights, op outputs, gradients) adds an independent
// rounding of up to u, their RMS adding in quadrature, with a factor 4 for
// the gains RMSNorm and softmax pass errors on with. The weights come in
// the file's dtype: a BF16 file run in fp16 is exact (8 bits fit in 11), an
// F32 or F16 file run in bf16 rounds once more, counted as the weights'
// stage. The references are float64, so nothing of PyTorch's own rounding
// enters the bound.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "adamw_bounds.hpp"
#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "vkamp/config/train_config.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/models/hf_checkpoint.hpp"
#include "vkamp/models/llama.hpp"
#include "vkamp/train/model.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {

// sqrt(k) over the sums on a logit's path: per block two RMSNorms (C), q,
// k and v (C), the scores (hd), P V (T), o_proj (H hd), gate and up (C),
// down (I); then the final norm and the lm_head (C each).
inline double forward_sqrt_k(const models::LlamaConfig& c, uint32_t T) {
  const double C = c.hidden_size, hd = c.head_size(), H = c.num_attention_heads, I = c.intermediate_size;
  const double block = 2 * std::sqrt(C) + std::sqrt(C) + std::sqrt(hd) + std::sqrt(double(T)) + std::sqrt(H * hd) +
                       std::sqrt(C) + std::sqrt(I);
  return c.num_hidden_layers * block + 2 * std::sqrt(C);
}
inline double gradient_sqrt_k(const models::LlamaConfig& c, uint32_t T, uint32_t rows) {
  return 2 * forward_sqrt_k(c, T) + (7 * c.num_hidden_layers + 2) * std::sqrt(double(rows));
}
// 16-bit stages on a logit's path: the embedding's table and output; per
// block the two norms' weights and outputs (4), q, k, v's weights, biases
// and outputs (9), rope's output, the scores, the probabilities and P V
// (4), o_proj's weight and output (2), the residual sums (2), gate and
// up's weights and outputs (4), glu's output, down's weight and output (3);
// the final norm (2) and the lm_head (2).
inline double forward_roundings(const models::LlamaConfig& c) { return 2 + c.num_hidden_layers * 28.0 + 4; }
inline double gradient_roundings(const models::LlamaConfig& c) { return 2 * forward_roundings(c) + 1; }

inline float loss_scale(Format fmt) { return fmt == Format::F32 ? 1.0f : 1024.0f; }

inline double bound_for(Format fmt, double sqrt_k, double roundings) {
  double b = nmse_bound(Format::F32, sqrt_k);
  if (fmt != Format::F32) b += 16 * roundings / 3 * unit_roundoff(fmt) * unit_roundoff(fmt);
  return b;
}

inline void expect_close(const std::string& label, const std::vector<float>& out, const std::vector<float>& ref,
                         double bound) {
  double e = 0, n = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    e += (double(out[i]) - ref[i]) * (double(out[i]) - ref[i]);
    n += double(ref[i]) * ref[i];
  }
  std::printf("[golden] %-52s nmse %.3e  bound %.3e\n", label.c_str(), n > 0 ? e / n : e, bound);
  EXPECT_TRUE(close_to(out, to_double(ref), bound)) << label;
}

// As in the GPT test: the loss moves by at most 2 max|dz|, max|dz| taken as
// 4 times the logits' RMS error (logit_rms: the reference logits' RMS); the
// fp32 loss adds a few u32 per row.
inline double loss_tolerance(double logit_bound, double logit_rms, double ref_loss, uint32_t rows) {
  return 8 * std::sqrt(logit_bound) * logit_rms + (4.0 + rows) * 0x1p-24 * ref_loss;
}

// The fixture's LoRA settings (its metadata: lora_r, lora_alpha, lora_targets).
inline models::LoraConfig lora_of(const io::TensorFile& lora) {
  models::LoraConfig lc;
  lc.rank = uint32_t(std::stoul(lora.metadata.at("lora_r")));
  lc.alpha = std::stod(lora.metadata.at("lora_alpha"));
  lc.targets.clear();
  const std::string& list = lora.metadata.at("lora_targets");
  for (size_t at = 0, next; at <= list.size(); at = next + 1) {
    next = std::min(list.find(',', at), list.size());
    lc.targets.push_back(list.substr(at, next - at));
  }
  return lc;
}

// The adapters (the model's only trained tensors) set to `prefix`<name>.
inline void load_adapters(train::Model& m, const io::TensorFile& f, const std::string& prefix,
                          const std::string& label) {
  std::vector<float> w = m.read_master();
  for (const auto& t : m.tensors()) {
    ASSERT_TRUE(models::is_lora_adapter(t.name)) << t.name << " trains, but only the adapters should";
    const std::vector<float> v = f.floats(prefix + t.name, label);
    ASSERT_EQ(v.size(), t.size) << t.name;
    std::copy(v.begin(), v.end(), w.begin() + t.offset);
  }
  m.write_master(w);
}

// The forward's and the adapters' gradients' bounds with LoRA on `lc`. Each
// adapted projection adds two sums (over `in` and r) and three 16-bit
// stages (u = x A^T and the two working copies) to the forward; an
// adapter's gradient sums over the rows (dB, dA) and the outputs (du),
// which gradient_sqrt_k's terms already exceed.
struct LoraBounds {
  double logits, grads;
};
inline LoraBounds lora_bounds(Format fmt, const models::LlamaConfig& cfg, uint32_t seq, uint32_t rows,
                              const models::LoraConfig& lc) {
  const double adapted = double(cfg.num_hidden_layers) * lc.targets.size();
  const double sqrt_k =
      forward_sqrt_k(cfg, seq) + adapted * (std::sqrt(double(cfg.intermediate_size)) + std::sqrt(double(lc.rank)));
  return {bound_for(fmt, sqrt_k, forward_roundings(cfg) + 3 * adapted),
          bound_for(fmt, 2 * sqrt_k + 3 * adapted * std::sqrt(double(rows)),
                    2 * (forward_roundings(cfg) + 3 * adapted) + 1)};
}

// Each adapter's gradient (the model's, unscaled) against grad.<name>, and
// all of them together; per tensor `rows` times looser than all together:
// a gradient sums terms of mixed signs over the rows.
inline void expect_adapter_gradients(const std::string& tag, train::Model& m, Format fmt, const io::TensorFile& ref,
                                     const std::string& label, double grad_bound, uint32_t rows) {
  std::vector<float> grads = download(m.grads(), fmt, m.param_elements());
  std::vector<float> all, all_ref;
  for (const auto& t : m.tensors()) {
    std::vector<float> g(grads.begin() + t.offset, grads.begin() + t.offset + t.size);
    for (float& v : g) v /= loss_scale(fmt);
    const std::vector<float> r = ref.floats("grad." + t.name, label);
    ASSERT_EQ(r.size(), g.size()) << t.name;
    expect_close(tag + "grad " + t.name, g, r, rows * grad_bound);
    all.insert(all.end(), g.begin(), g.end());
    all_ref.insert(all_ref.end(), r.begin(), r.end());
  }
  expect_close(tag + "adapter gradients (all)", all, all_ref, grad_bound);
}

// A trainer's settings for AdamW on the adapters as the fixture's metadata
// says (adamw.*), a constant rate, a static loss scale in 16 bits.
inline config::TrainConfig lora_adamw_config(Format fmt, const io::TensorFile& lora, uint32_t batch, uint32_t epochs) {
  auto meta = [&](const char* key) { return std::stod(lora.metadata.at(key)); };
  config::TrainConfig c;
  c.precision = fmt;
  c.batch = batch;
  c.epochs = epochs;
  c.seed = 1;
  c.scaler.histogram_interval = 0;
  c.scaler.mode = fmt == Format::F32 ? config::LossScaleMode::None : config::LossScaleMode::Static;
  c.scaler.initial_loss_scale = loss_scale(fmt);
  auto& o = c.optimizer;
  o.kind = config::OptimizerKind::AdamW;
  o.schedule = config::LrSchedule::Constant;
  o.lr = meta("adamw.lr");
  o.beta1 = meta("adamw.beta1");
  o.beta2 = meta("adamw.beta2");
  o.eps = meta("adamw.eps");
  o.weight_decay = meta("adamw.weight_decay");
  return c;
}

// w - w0 flattened over the model's tensors (w, w0: masters), and the
// reference's ref.<prefix><name> - w0.
struct Deltas {
  std::vector<double> out, ref;
};
inline Deltas adapter_deltas(const train::Model& m, const std::vector<float>& w, const std::vector<float>& w0,
                             const io::TensorFile& ref, const std::string& prefix, const std::string& label) {
  Deltas d;
  for (const auto& t : m.tensors()) {
    const std::vector<float> r = ref.floats(prefix + t.name, label);
    for (uint32_t i = 0; i < t.size; ++i) {
      d.out.push_back(double(w[t.offset + i]) - w0[t.offset + i]);
      d.ref.push_back(double(r[i]) - w0[t.offset + i]);
    }
  }
  return d;
}

inline double distance(const Deltas& d) {
  double s = 0;
  for (size_t i = 0; i < d.out.size(); ++i) s += (d.out[i] - d.ref[i]) * (d.out[i] - d.ref[i]);
  return std::sqrt(s);
}

// The update of a few AdamW steps against PyTorch's, with adamw_bounds.hpp's
// bounds from the gradients' bound (grad0: the reference's first gradient;
// w0_rms: the initial adapters' RMS): the whole update, and the update of
// the well resolved gradients alone, which must be at least 5.
inline void expect_adamw_update(const std::string& tag, const Deltas& d, const std::vector<double>& grad0,
                                double w0_rms, double grad_bound, double lr, double steps) {
  const std::vector<float> ref(d.ref.begin(), d.ref.end());
  double ref_rms = 0;
  for (double v : d.ref) ref_rms += v * v;
  ref_rms = std::sqrt(ref_rms / double(d.ref.size()));
  // The masters are fp32: each of the steps rounds w + dw once (a few u32 of |w|).
  const double master_ulps = 6 * w0_rms / ref_rms;
  expect_close(tag + "adamw update w - w0", std::vector<float>(d.out.begin(), d.out.end()), ref,
               nmse_bound(Format::F32, master_ulps) + adamw_update_bound(grad0, grad_bound, lr, steps, d.ref));
  // The adapters are few (hundreds of values), and in bf16 the gradients'
  // bound leaves only a handful resolved: a handful still tests the update.
  const Resolved res = adamw_resolved(grad0, grad_bound, lr, steps, d.ref);
  ASSERT_GE(res.index.size(), 5u) << "too few resolved gradients to test the update";
  std::vector<float> resolved, ref_resolved;
  for (size_t i : res.index) {
    resolved.push_back(float(d.out[i]));
    ref_resolved.push_back(float(d.ref[i]));
  }
  expect_close(tag + "adamw update, resolved gradients", resolved, ref_resolved,
               nmse_bound(Format::F32, master_ulps) + res.bound);
}

inline void expect_loss(const std::string& label, double loss, double ref, double tol) {
  std::printf("[golden] %-52s |d| %.3e  bound %.3e\n", label.c_str(), std::abs(loss - ref), tol);
  EXPECT_NEAR(loss, ref, tol) << label;
}

// Three AdamW steps of the adapters through the trainer (the base frozen,
// a static loss scale in 16 bits) on one batch, the whole set, so one step
// an epoch; against PyTorch's torch.optim.AdamW on the float64 model
// (lora: adamw.losses, adamw.step3.<adapter>, grad.<adapter>): the update
// w3 - w0 and the loss before each step.
struct AdamwCase {
  std::string tag;
  Format fmt;
  models::LlamaConfig cfg;
  const io::TensorFile& lora;
  std::string label;
  uint32_t batch, seq;
  const std::vector<uint32_t>& ids;
  const std::vector<uint32_t>& targets;
  std::function<void(train::Model&)> load;  // the base and the initial adapters
  double logit_rms;                         // the reference's logits at init
  std::function<void(graph::Graph&)> hold = {};  // before the model is built (a QLoRA base's blocks)
};
inline void expect_adamw_steps_match(const AdamwCase& a) {
  const models::LoraConfig lc = lora_of(a.lora);
  const config::TrainConfig c =
      lora_adamw_config(a.fmt, a.lora, a.batch, uint32_t(std::stoul(a.lora.metadata.at("steps"))));
  data::HostData data{a.batch, a.seq, std::vector<float>(a.ids.begin(), a.ids.end()), a.targets, {}};
  graph::Graph g = models::llama_graph(a.cfg, a.seq, lc);
  if (a.hold) a.hold(g);
  train::Trainer t(ctx(), c, std::move(g), train::LossKind::SoftmaxXent, data);
  a.load(t.model());
  const std::vector<float> w0 = t.model().read_master();
  std::vector<float> losses;
  double grad_norm = 0;  // the largest over the steps (unscaled)
  t.on_step = [&](const train::StepMetrics& s) {
    EXPECT_FALSE(s.skipped);
    losses.push_back(s.loss);
    grad_norm = std::max(grad_norm, double(s.grad_norm));
  };
  t.run();
  const std::vector<float> ref_losses = a.lora.floats("adamw.losses", a.label);
  ASSERT_EQ(losses.size(), ref_losses.size());

  const Deltas d = adapter_deltas(t.model(), t.model().read_master(), w0, a.lora, "adamw.step3.", a.label);
  std::vector<double> grad0;
  for (const auto& tensor : t.model().tensors())
    for (float g : a.lora.floats("grad." + tensor.name, a.label)) grad0.push_back(g);
  const uint32_t rows = a.batch * a.seq;
  const LoraBounds b = lora_bounds(a.fmt, a.cfg, a.seq, rows, lc);
  expect_adamw_update(a.tag, d, grad0, rms(to_double(w0)), b.grads, c.optimizer.lr, double(ref_losses.size()));
  // The first loss as the one-step test's. Later ones also move with the
  // weights' difference dw, to first order by at most |g| |dw|: dw as
  // measured after the last step (the steps' errors add up, so the earlier
  // ones are smaller), |g| the largest gradient norm of the run, doubled
  // for the gradient's change along dw.
  const double tol0 = loss_tolerance(b.logits, a.logit_rms, ref_losses[0], rows);
  const double dw = distance(d);
  for (size_t k = 0; k < losses.size(); ++k)
    expect_loss(a.tag + "loss before step " + std::to_string(k + 1), losses[k], ref_losses[k],
                tol0 + (k ? 2 * grad_norm * dw : 0.0));
}

}  // namespace vkamp::test
