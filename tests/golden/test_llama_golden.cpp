// The Llama golden tests: tests/golden/make_llama_fixtures.py wrote three
// tiny random Llama-family models in Hugging Face's folder layout (grouped
// query heads, tied and untied lm_head, Qwen2's q/k/v biases, explicit
// head_dim, rope_theta 1e4, 5e5 with Llama 3's scaling, and 1e6; weights in
// F32, BF16, and F16 over two shards), with the logits, the loss and every
// gradient that a float64 PyTorch model written from transformers' code
// computes on one batch. vkamp reads each folder with its own loader
// (config.json, safetensors headers and shards) and reproduces them on the
// GPU in fp32, and in fp16 and bf16 with a static loss scale.
//
// Bounds: llama_golden.hpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "golden_step.hpp"
#include "llama_golden.hpp"
#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "support/test_paths.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/models/hf_checkpoint.hpp"
#include "vkamp/models/llama.hpp"
#include "vkamp/train/hf_weights.hpp"
#include "vkamp/train/model.hpp"
#include "vkamp/train/trainer.hpp"

namespace vkamp::test {
namespace {

struct Fixture {
  std::string dir;
  models::LlamaConfig cfg;
  io::TensorFile expected;
  std::vector<uint32_t> ids, targets;
  uint32_t batch = 0, seq = 0;
};

Fixture load(const std::string& name) {
  Fixture f;
  f.dir = VKAMP_TEST_DIR(VKAMP_GOLDEN_DIR) + "/" + name;
  f.cfg = models::read_hf_config(f.dir);
  f.expected = io::read_safetensors(f.dir + "/expected.safetensors");
  f.ids = token_ids(f.expected, "input_ids", f.dir);
  f.targets = token_ids(f.expected, "targets", f.dir);
  const io::Tensor* shape = f.expected.find("input_ids");
  if (shape->shape.size() != 2) throw std::runtime_error(f.dir + ": input_ids is not [B, T]");
  f.batch = uint32_t(shape->shape[0]);
  f.seq = uint32_t(shape->shape[1]);
  return f;
}

// One golden step on the fixture's batch (16-bit formats at a static
// scale of 1024); returns the loss.
double golden_step(train::Model& m, Format fmt, const Fixture& f) {
  return golden_forward_backward(m, fmt, f.ids, f.targets, f.batch, f.seq, f.cfg.vocab_size, loss_scale(fmt));
}

using Case = std::tuple<std::string, Format>;

class LlamaGolden : public GpuTestP<Case> {};

TEST_P(LlamaGolden, LogitsLossAndGradientsMatchPyTorch) {
  const auto& [name, fmt] = GetParam();
  const Fixture f = load(name);
  const uint32_t rows = f.batch * f.seq;
  train::Model m(ctx(), models::llama_graph(f.cfg, f.seq), fmt, f.batch, /*seed=*/1, false, false);
  train::load_hf_weights(f.dir, m);

  const float scale = loss_scale(fmt);
  const double loss = golden_step(m, fmt, f);
  const std::string tag = name + " " + format_name(fmt) + " ";

  const std::vector<float> ref_logits = f.expected.floats("logits", f.dir);
  const double logit_bound = bound_for(fmt, forward_sqrt_k(f.cfg, f.seq), forward_roundings(f.cfg));
  expect_close(tag + "logits", download(m.output(), fmt, ref_logits.size()), ref_logits, logit_bound);

  const double ref_loss = f.expected.floats("loss", f.dir).at(0);
  expect_loss(tag + "loss", loss, ref_loss, loss_tolerance(logit_bound, rms(to_double(ref_logits)), ref_loss, rows));

  // Per tensor `rows` times looser than all of them together: a gain's or
  // bias's gradient sums terms of mixed signs over the rows.
  std::vector<float> grads = download(m.grads(), fmt, m.param_elements());
  const double grad_bound = bound_for(fmt, gradient_sqrt_k(f.cfg, f.seq, rows), gradient_roundings(f.cfg));
  std::vector<float> all, all_ref;
  for (const auto& t : m.tensors()) {
    std::vector<float> g(grads.begin() + t.offset, grads.begin() + t.offset + t.size);
    for (float& v : g) v /= scale;
    const std::vector<float> ref = f.expected.floats("grad." + t.name, f.dir);
    ASSERT_EQ(ref.size(), g.size()) << t.name;
    expect_close(tag + "grad " + t.name, g, ref, rows * grad_bound);
    all.insert(all.end(), g.begin(), g.end());
    all_ref.insert(all_ref.end(), ref.begin(), ref.end());
  }
  expect_close(tag + "gradients (all)", all, all_ref, grad_bound);
}

// The same batch with LoRA adapters on the metadata's targets, the base
// frozen (held in the run's format only): the logits, the loss, and each
// adapter's gradient (bounds: llama_golden.hpp's lora_bounds).
class LlamaLoraGolden : public GpuTestP<Case> {};

// The folder's base (frozen) and the fixture's initial adapters (masters).
void load_lora_model(train::Model& m, const Fixture& f, const io::TensorFile& lora) {
  train::load_hf_weights(f.dir, m);
  load_adapters(m, lora, "init.", f.dir);
}

TEST_P(LlamaLoraGolden, AdapterLogitsLossAndGradientsMatchPyTorch) {
  const auto& [name, fmt] = GetParam();
  const Fixture f = load(name);
  const io::TensorFile lora = io::read_safetensors(f.dir + "/lora_expected.safetensors");
  const models::LoraConfig lc = lora_of(lora);
  const uint32_t rows = f.batch * f.seq;
  train::Model m(ctx(), models::llama_graph(f.cfg, f.seq, lc), fmt, f.batch, /*seed=*/1, false, false);
  load_lora_model(m, f, lora);
  EXPECT_EQ(m.tensors().size(), 2 * f.cfg.num_hidden_layers * lc.targets.size());
  const graph::Graph plain = models::llama_graph(f.cfg, f.seq);
  uint64_t base = 0;
  for (int i : plain.param_indices()) base += graph::elements(plain.tensors()[i]);
  EXPECT_EQ(m.frozen().count(), base) << "every base tensor is frozen";

  const double loss = golden_step(m, fmt, f);
  const std::string tag = name + " LoRA " + format_name(fmt) + " ";
  const LoraBounds b = lora_bounds(fmt, f.cfg, f.seq, rows, lc);
  const double logit_bound = b.logits;
  const std::vector<float> ref_logits = lora.floats("logits", f.dir);
  expect_close(tag + "logits", download(m.output(), fmt, ref_logits.size()), ref_logits, logit_bound);
  const double ref_loss = lora.floats("loss", f.dir).at(0);
  expect_loss(tag + "loss", loss, ref_loss, loss_tolerance(logit_bound, rms(to_double(ref_logits)), ref_loss, rows));
  expect_adapter_gradients(tag, m, fmt, lora, f.dir, b.grads, rows);
}

// Three AdamW steps of the adapters through the trainer against PyTorch's
// (llama_golden.hpp's expect_adamw_steps_match).
TEST_P(LlamaLoraGolden, ThreeStepsOfAdamWMatchPyTorch) {
  const auto& [name, fmt] = GetParam();
  const Fixture f = load(name);
  const io::TensorFile lora = io::read_safetensors(f.dir + "/lora_expected.safetensors");
  const std::vector<float> ref_logits = lora.floats("logits", f.dir);
  expect_adamw_steps_match({name + " LoRA " + format_name(fmt) + " ", fmt, f.cfg, lora, f.dir, f.batch, f.seq, f.ids,
                            f.targets, [&](train::Model& m) { load_lora_model(m, f, lora); },
                            rms(to_double(ref_logits))});
}

INSTANTIATE_TEST_SUITE_P(Fixture, LlamaLoraGolden,
                         ::testing::Combine(::testing::Values("llama_gqa", "qwen2_bias"),
                                            ::testing::Values(Format::F32, Format::F16, Format::BF16)),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return std::get<0>(i.param) + "_" + format_name(std::get<1>(i.param));
                         });

INSTANTIATE_TEST_SUITE_P(Fixture, LlamaGolden,
                         ::testing::Combine(::testing::Values("llama_gqa", "llama3_tied", "qwen2_bias"),
                                            ::testing::Values(Format::F32, Format::F16, Format::BF16)),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return std::get<0>(i.param) + "_" + format_name(std::get<1>(i.param));
                         });

}  // namespace
}  // namespace vkamp::test
