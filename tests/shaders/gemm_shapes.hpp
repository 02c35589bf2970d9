// The GEMM shapes the shader tests run (test_gemm.cpp, test_gemm_grad.cpp).
// A shape names the GEMM it runs: the output is m x n and each output sums
// k products.
#pragma once
#include <cstdint>
#include <string>

namespace vkamp::test {

struct Shape {
  uint32_t m, n, k;
};

// Sizes from {1, 7, 33, 127, 1000}: single elements, partial tiles,
// several tiles along m, along n and along both, a 16-deep k tile cut short,
// and a long k where fp32 accumulation error grows. The last two are
// convolution shapes (gemm_plan, asserted in test_gemm.cpp's GemmPlan): 4099
// output pixels of 6 channels from 25 taps takes the thinnest, tallest tile,
// and 6 x 25 over k = 4099 (a conv's dW) is split over k; so is 33 x 7 over
// 1000.
constexpr Shape kShapes[] = {{1, 1, 1},     {7, 33, 127},   {33, 127, 7},    {127, 7, 33},
                             {1000, 33, 7}, {7, 1000, 33},  {33, 7, 1000},   {127, 127, 127},
                             {4099, 6, 25}, {6, 25, 4099}};

inline std::string shape_name(const Shape& s) {
  return "m" + std::to_string(s.m) + "_n" + std::to_string(s.n) + "_k" + std::to_string(s.k);
}

}  // namespace vkamp::test
