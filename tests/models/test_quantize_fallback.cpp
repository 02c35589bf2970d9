// --quantize TYPE on matrices whose rows are not whole blocks of TYPE:
// the type llama.cpp's quantizer falls back to (llama-quant.cpp,
// tensor_type_fallback: q4_k -> q5_0, q5_k -> q5_1, q6_k -> q8_0; F16,
// here the run's format, where no 32-value block fits either), as
// hold_frozen_in_blocks applies it to a real shape whose hidden size (896,
// Qwen2.5-0.5B) is no multiple of 256.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "vkamp/models/gguf_model.hpp"
#include "vkamp/models/llama_presets.hpp"

namespace vkamp::models {
namespace {

using quant::GgmlType;

TEST(QuantizeFallback, LlamaCppsTypeForRowsThatAreNotWholeBlocks) {
  EXPECT_EQ(quantize_type_for_rows(GgmlType::Q4_K, 4864), GgmlType::Q4_K);
  EXPECT_EQ(quantize_type_for_rows(GgmlType::Q4_K, 896), GgmlType::Q5_0);
  EXPECT_EQ(quantize_type_for_rows(GgmlType::Q5_K, 896), GgmlType::Q5_1);
  EXPECT_EQ(quantize_type_for_rows(GgmlType::Q6_K, 896), GgmlType::Q8_0);
  EXPECT_EQ(quantize_type_for_rows(GgmlType::Q8_0, 896), GgmlType::Q8_0);
  EXPECT_EQ(quantize_type_for_rows(GgmlType::Q4_0, 96), GgmlType::Q4_0);
  for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q8_0, GgmlType::Q4_1})
    EXPECT_EQ(quantize_type_for_rows(t, 100), std::nullopt) << "no 32-value block fits rows of 100";
}

TEST(QuantizeFallback, Qwen25HalfBInQ4K) {
  LoraConfig lora;
  lora.rank = 8;
  graph::Graph g = llama_graph(*llama_preset("qwen2.5-0.5b"), 8, lora);
  const std::vector<std::string> left = hold_frozen_in_blocks(g, GgmlType::Q4_K);
  EXPECT_TRUE(left.empty()) << left.front();
  std::map<std::string, int> by_type;
  for (const graph::Tensor& t : g.tensors())
    if (t.blocks) ++by_type[quant::ggml_type_info(*t.blocks).name];
  // Rows of 4,864 (down_proj) are whole q4_k blocks; rows of 896 (the
  // other six projections and the tied embedding) fall back to q5_0.
  EXPECT_EQ(by_type["q4_k"], 24);
  EXPECT_EQ(by_type["q5_0"], 24 * 6 + 1);
}

}  // namespace
}  // namespace vkamp::models
