// Parameters shared by the shader tests: every storage format at the
// awkward sizes (docs/testing.md), named so ctest lists e.g. "fp16_n127".
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "vkamp/float_formats.hpp"

namespace vkamp::test {

inline constexpr uint32_t kSizes[] = {1, 7, 33, 127, 1000};

using FormatSize = std::tuple<Format, uint32_t>;

inline std::string format_size_name(const ::testing::TestParamInfo<FormatSize>& info) {
  return std::string(format_name(std::get<0>(info.param))) + "_n" + std::to_string(std::get<1>(info.param));
}

inline constexpr Format kSixteenBitFormats[] = {Format::F16, Format::BF16, Format::CB16};

inline auto sixteen_bit_formats_and_sizes() {
  return ::testing::Combine(::testing::ValuesIn(kSixteenBitFormats), ::testing::ValuesIn(kSizes));
}

inline auto all_formats_and_sizes() {
  return ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::ValuesIn(kSizes));
}

}  // namespace vkamp::test
