// The host conversions (engine/src/float_formats.cpp) against the reference
// written from each format's definition: every 16-bit pattern decodes
// right, and fresh random fp32 values round to nearest even.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "support/reference.hpp"
#include "vkamp/float_formats.hpp"

namespace vkamp::test {
namespace {

class FloatFormats : public ::testing::TestWithParam<Format> {};

TEST_P(FloatFormats, DecodesEveryPattern) {
  Format fmt = GetParam();
  for (uint32_t p = 0; p < 65536; ++p) {
    double want = decode_reference(fmt, uint16_t(p));
    float got = unpack(fmt, std::vector<uint8_t>{uint8_t(p), uint8_t(p >> 8)})[0];
    if (std::isnan(want)) ASSERT_TRUE(std::isnan(got)) << std::hex << p;
    else ASSERT_EQ(double(got), want) << "pattern 0x" << std::hex << p;
  }
}

TEST_P(FloatFormats, RoundsRandomValuesToNearestEven) {
  Format fmt = GetParam();
  std::mt19937_64 gen(std::random_device{}());
  std::uniform_int_distribution<uint32_t> any;
  for (int i = 0; i < 200000; ++i) {
    float x = std::bit_cast<float>(any(gen));
    double want = round_reference(fmt, x);
    float got = round_to(fmt, x);
    if (std::isnan(want)) ASSERT_TRUE(std::isnan(got));
    else ASSERT_EQ(double(got), want) << "input bits 0x" << std::hex << std::bit_cast<uint32_t>(x);
  }
}

TEST_P(FloatFormats, RoundsExactTiesToEven) {
  Format fmt = GetParam();
  // Midpoints between neighbouring values: the even pattern must win.
  for (uint32_t p = 1; p < 0x7B00; p += 37) {
    double a = decode_reference(fmt, uint16_t(p)), b = decode_reference(fmt, uint16_t(p + 1));
    if (!std::isfinite(b)) break;
    float mid = float((a + b) / 2);
    if (double(mid) != (a + b) / 2) continue;  // not representable in fp32
    double want = (p % 2 == 0) ? a : b;
    ASSERT_EQ(double(round_to(fmt, mid)), want) << "tie between patterns " << p << " and " << p + 1;
  }
}

TEST(FloatFormatsTable, LimitsMatchDesignNotes) {
  EXPECT_EQ(format_max(Format::F16), 65504.0);
  EXPECT_NEAR(format_max(Format::BF16), 3.39e38, 0.01e38);
  EXPECT_NEAR(format_max(Format::CB16), 4.29e9, 0.01e9);
  EXPECT_NEAR(decode_reference(Format::CB16, 0x0200), 9.31e-10, 0.01e-10);  // smallest normal
}

TEST(FloatFormatsTable, ParsesNamesAndCerebrasSpellings) {
  EXPECT_EQ(parse_format("float16"), Format::F16);
  EXPECT_EQ(parse_format("cbfloat16"), Format::CB16);
  EXPECT_EQ(parse_format("bf16"), Format::BF16);
  EXPECT_FALSE(parse_format("fp8").has_value());
}

INSTANTIATE_TEST_SUITE_P(Host, FloatFormats, ::testing::Values(Format::F16, Format::BF16, Format::CB16),
                         [](const auto& info) { return std::string(format_name(info.param)); });

}  // namespace
}  // namespace vkamp::test
