// The ggml type table, and dequantize_row against ggml's own dequantization
// (tests/quant/fixtures, make_fixtures.py) bit for bit: every type, on
// ggml's blocks of fixed rows (zeros, magnitudes 1e-6 .. 1e4, mixed signs,
// fp16-subnormal scales) and on random blocks (random codes and scale
// bits, subnormal scales, and for F16/BF16 inf and NaN patterns).
#include <gtest/gtest.h>

#include <stdexcept>

#include "quant/ggml_fixture.hpp"
#include "vkamp/quant/dequantize.hpp"

namespace vkamp::test {
namespace {

using quant::GgmlType;

TEST(GgmlTypes, TableIsGgmls) {
  // ggml-common.h's block sizes (static_asserts there), by id.
  struct Row {
    uint32_t id;
    const char* name;
    uint32_t values, bytes;
  };
  const Row rows[] = {{0, "f32", 1, 4},       {1, "f16", 1, 2},       {2, "q4_0", 32, 18},  {3, "q4_1", 32, 20},
                      {6, "q5_0", 32, 22},    {7, "q5_1", 32, 24},    {8, "q8_0", 32, 34},  {12, "q4_k", 256, 144},
                      {13, "q5_k", 256, 176}, {14, "q6_k", 256, 210}, {30, "bf16", 1, 2}};
  for (const Row& r : rows) {
    auto info = quant::ggml_type_info(r.id);
    ASSERT_TRUE(info) << r.id;
    EXPECT_STREQ(info->name, r.name);
    EXPECT_EQ(info->block_values, r.values);
    EXPECT_EQ(info->block_bytes, r.bytes);
    EXPECT_EQ(quant::ggml_type_from_name(r.name), info->type);
    EXPECT_EQ(quant::is_quantized(info->type), r.values > 1);
    EXPECT_EQ(quant::ggml_row_bytes(info->type, 4096), 4096 / r.values * r.bytes);
  }
  EXPECT_EQ(quant::ggml_type_from_name("Q4_K"), GgmlType::Q4_K);
  EXPECT_EQ(quant::ggml_type_from_name("q6_K"), GgmlType::Q6_K);
  EXPECT_FALSE(quant::ggml_type_from_name("q4_k_m"));
  EXPECT_FALSE(quant::ggml_type_from_name("q4"));
  EXPECT_FALSE(quant::ggml_type_info(4));   // ggml's removed Q4_2
  EXPECT_FALSE(quant::ggml_type_info(10));  // Q2_K: not read
  EXPECT_EQ(quant::ggml_type_names(), "f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0, q4_k, q5_k, q6_k, bf16");
  EXPECT_THROW(quant::ggml_row_bytes(GgmlType::Q4_K, 300), std::invalid_argument);
  EXPECT_THROW(quant::ggml_type_info(GgmlType(10)), std::invalid_argument);
}

TEST(GgmlDequantize, FixtureRowsBitForBit) {
  const GgmlFixture fx = load_ggml_fixture();
  ASSERT_EQ(fx.types.size(), 11u);
  for (const GgmlTypeFixture& t : fx.types) {
    SCOPED_TRACE(quant::ggml_type_info(t.type).name);
    for (size_t r = 0; r < fx.rows.size(); ++r) {
      std::vector<float> out(fx.values);
      quant::dequantize_row(t.type, t.blocks[r].data(), out.data(), fx.values);
      EXPECT_EQ(bits_of(out), bits_of(t.dequantized[r])) << "row " << r;
    }
  }
}

TEST(GgmlDequantize, RandomBlocksBitForBit) {
  const GgmlFixture fx = load_ggml_fixture();
  for (const GgmlTypeFixture& t : fx.types) {
    SCOPED_TRACE(quant::ggml_type_info(t.type).name);
    std::vector<float> out(fx.values);
    quant::dequantize_row(t.type, t.random_blocks.data(), out.data(), fx.values);
    EXPECT_EQ(bits_of(out), bits_of(t.random_dequantized));
  }
}

TEST(GgmlDequantize, Fp16Conversion) {
  // ggml's GGML_FP16_TO_FP32: exact, subnormals kept, NaN made quiet.
  EXPECT_EQ(bits_of({quant::ggml_fp16_to_f32(0x0001)})[0], 0x33800000u);  // 2^-24
  EXPECT_EQ(bits_of({quant::ggml_fp16_to_f32(0x03FF)})[0], 0x387FC000u);
  EXPECT_EQ(bits_of({quant::ggml_fp16_to_f32(0x3C00)})[0], 0x3F800000u);
  EXPECT_EQ(bits_of({quant::ggml_fp16_to_f32(0x7BFF)})[0], 0x477FE000u);  // 65504
  EXPECT_EQ(bits_of({quant::ggml_fp16_to_f32(0xFC00)})[0], 0xFF800000u);
  EXPECT_EQ(bits_of({quant::ggml_fp16_to_f32(0x7C01)})[0], 0x7FC02000u);
  EXPECT_EQ(bits_of({quant::ggml_fp16_to_f32(0x8000)})[0], 0x80000000u);
}

TEST(GgmlDequantize, RejectsPartialBlocks) {
  std::vector<uint8_t> blocks(210);
  std::vector<float> out(300);
  EXPECT_THROW(quant::dequantize_row(GgmlType::Q6_K, blocks.data(), out.data(), 100), std::invalid_argument);
}

}  // namespace
}  // namespace vkamp::test
