// QLoRA against PyTorch (issue 53, item 4): LoRA adapters over a frozen
// base held in ggml's blocks, against a float64 PyTorch model on the
// weights as ggml's own dequantizer gives them back.
// tests/golden/make_qlora_fixtures.py drew a tiny Llama (Q8_0, tied
// lm_head) and a tiny Qwen2 (Q4_K, untied) with the shared generator,
// quantized every matrix with ggml's quantizer (ggml_quantize_chunk) and
// dequantized it with ggml's dequantize_row_*; the reference ran on those
// values. Here the graph holds every frozen matrix in the fixture's type
// (models::hold_frozen_in_blocks, as vkamp-finetune --quantize does), and
// train::load_hf_weights quantizes the F32 file with vkamp's quantizer
// (byte for byte ggml's, tests/quant): the blocks the GEMM and the
// embedding read are ggml's.
//
// Bounds: the dequantized weights are exact fp32 values (a block's scale
// times its integers, as ggml computes them in fp32, and the GEMM
// dequantizes each one to the same fp32 value before its fp32 products), so
// the reference runs on exactly the base vkamp multiplies by, and the
// bounds are the unquantized LoRA golden test's (llama_golden.hpp's
// lora_bounds). In fp16 the base is not rounded to fp16 (the GEMM reads its
// blocks, never a 16-bit copy), so the weights' 16-bit stage lora_bounds
// counts does not happen: the bound holds with room.
//
// The test sees the quantization: the same reference on the file's own
// (unquantized) weights, orig.*, is farther from vkamp's logits and
// gradients than those bounds, in every case here (Q8_0 in fp16 by the
// least: its 8-bit rounding of the weights moves the logits by an NMSE of
// 1.9e-4, the fp16 bound is 1.3e-4).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "drawn_golden.hpp"
#include "vkamp/models/gguf_model.hpp"
#include "vkamp/quant/ggml_type.hpp"
#include "vkamp/train/hf_weights.hpp"

namespace vkamp::test {
namespace {

using Case = std::tuple<Format, std::string>;
std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  return std::string(format_name(std::get<0>(i.param))) + "_" + std::get<1>(i.param);
}

quant::GgmlType fixture_type(const DrawnFixture& f) {
  const std::optional<quant::GgmlType> t = quant::ggml_type_from_name(f.lora.metadata.at("quantize"));
  if (!t) throw std::runtime_error(f.src + ": unknown quantize " + f.lora.metadata.at("quantize"));
  return *t;
}

// Every frozen matrix in the fixture's blocks (none left in the run's
// format: the fixture's rows are whole blocks).
void hold_in_fixture_blocks(graph::Graph& g, quant::GgmlType type) {
  const std::vector<std::string> left = models::hold_frozen_in_blocks(g, type);
  EXPECT_TRUE(left.empty()) << left.front() << " is not held in blocks";
}

double nmse(const std::vector<float>& out, const std::vector<float>& ref) {
  double e = 0, n = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    e += (double(out[i]) - ref[i]) * (double(out[i]) - ref[i]);
    n += double(ref[i]) * ref[i];
  }
  return e / n;
}

// vkamp's result (the model's logits and gradients after the step) is
// farther from the reference on the unquantized weights (orig.*) than the
// bound: a run that ignored the blocks' rounding would fail the test.
void expect_quantization_seen(train::Model& m, Format fmt, const DrawnFixture& f, const std::string& tag) {
  const uint32_t rows = f.batch * f.seq;
  const LoraBounds b = lora_bounds(fmt, f.cfg, f.seq, rows, lora_of(f.lora));
  const SampledLogits s = sampled_logits(f, download(m.output(), fmt, size_t(rows) * f.cfg.vocab_size), "orig.");
  const double logits = nmse(s.out, s.ref);
  std::printf("[golden] %-52s nmse %.3e  > bound %.3e\n", (tag + "logits vs unquantized").c_str(), logits, b.logits);
  EXPECT_GT(logits, b.logits) << "the logits do not show the quantization";

  const std::vector<float> grads = download(m.grads(), fmt, m.param_elements());
  std::vector<float> all, all_orig;
  for (const auto& t : m.tensors()) {
    for (uint32_t i = 0; i < t.size; ++i) all.push_back(grads[t.offset + i] / loss_scale(fmt));
    const std::vector<float> r = f.lora.floats("orig.grad." + t.name, f.src);
    all_orig.insert(all_orig.end(), r.begin(), r.end());
  }
  const double g = nmse(all, all_orig);
  std::printf("[golden] %-52s nmse %.3e  > bound %.3e\n", (tag + "gradients vs unquantized").c_str(), g, b.grads);
  EXPECT_GT(g, b.grads) << "the adapters' gradients do not show the quantization";
}

class QloraGolden : public GpuTestP<Case> {};

TEST_P(QloraGolden, AdapterLogitsLossAndGradientsMatchPyTorchOnTheDequantizedBase) {
  const auto& [fmt, name] = GetParam();
  const DrawnFixture f = load_drawn(name);
  const quant::GgmlType type = fixture_type(f);
  graph::Graph g = models::llama_graph(f.cfg, f.seq, lora_of(f.lora));
  hold_in_fixture_blocks(g, type);
  train::Model m(ctx(), std::move(g), fmt, f.batch, /*seed=*/1, false, false);
  train::load_hf_weights(f.hf, m);
  load_adapters(m, f.lora, "init.", f.src);

  // The store holds ggml's blocks: it reads back, bit for bit, the values
  // ggml's dequantizer gave the reference (their checksums), for every
  // matrix the fixture quantized, and those are all it holds in blocks.
  const nlohmann::json sums = nlohmann::json::parse(f.lora.metadata.at("dequantized"));
  size_t in_blocks = 0;
  for (const graph::FrozenTensor& t : m.frozen().tensors()) {
    if (!t.blocks) continue;
    ++in_blocks;
    EXPECT_EQ(*t.blocks, type) << t.name;
    ASSERT_TRUE(sums.contains(t.name)) << t.name << " is held in blocks but the fixture did not quantize it";
    EXPECT_EQ(shared_checksum(Format::F32, m.frozen().read(t.name)), sums.at(t.name).get<std::string>())
        << t.name << ": not the values ggml dequantized";
  }
  EXPECT_EQ(in_blocks, sums.size()) << "every matrix the fixture quantized is held in blocks";

  const std::string tag = name + " " + format_name(fmt) + " ";
  expect_drawn_lora_step(m, fmt, f, tag);
  expect_quantization_seen(m, fmt, f, tag);
}

// Three AdamW steps of the adapters through the trainer over the blocks,
// against PyTorch's on the dequantized base (llama_golden.hpp's
// expect_adamw_steps_match).
TEST_P(QloraGolden, ThreeStepsOfAdamWMatchPyTorchOnTheDequantizedBase) {
  const auto& [fmt, name] = GetParam();
  const DrawnFixture f = load_drawn(name);
  const quant::GgmlType type = fixture_type(f);
  expect_adamw_steps_match({name + " " + format_name(fmt) + " ", fmt, f.cfg, f.lora, f.src, f.batch, f.seq, f.ids,
                            f.targets,
                            [&](train::Model& m) {
                              train::load_hf_weights(f.hf, m);
                              load_adapters(m, f.lora, "init.", f.src);
                            },
                            f.lora.floats("logit_rms", f.src).at(0),
                            [&](graph::Graph& g) { hold_in_fixture_blocks(g, type); }});
}

INSTANTIATE_TEST_SUITE_P(Qlora, QloraGolden,
                         ::testing::Combine(::testing::Values(Format::F32, Format::F16),
                                            ::testing::Values("qlora_q8_0", "qlora_q4_k")),
                         case_name);

}  // namespace
}  // namespace vkamp::test
