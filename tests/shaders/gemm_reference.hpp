// What the GEMM's shader tests share (test_gemm.cpp, test_gemm_epilogue.cpp):
// the shapes' parameter names, the error bound of one product, and the
// linear layer's three products in double, from their definitions.
#pragma once
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "shaders/gemm_shapes.hpp"
#include "support/numerics.hpp"

namespace vkamp::test {

using FormatShape = std::tuple<Format, Shape>;

inline std::string format_shape_name(const ::testing::TestParamInfo<FormatShape>& info) {
  return std::string(format_name(std::get<0>(info.param))) + "_" + shape_name(std::get<1>(info.param));
}

// Rounded once to fmt (1 ulp) after an fp32 sum whose k roundings random-walk to about sqrt(k) fp32 ulps.
inline double gemm_bound(Format fmt, uint32_t k, double roundings = 1.0) {
  double ulps = roundings + std::sqrt(double(k)) * unit_roundoff(Format::F32) / unit_roundoff(fmt);
  return nmse_bound(fmt, ulps);
}

// References in double, from the definitions of the linear layer's products.
// y[b,o] = sum_i x[b,i] w[o,i]
inline std::vector<double> ref_forward(const std::vector<float>& x, const std::vector<float>& w, uint32_t batch,
                                uint32_t in, uint32_t out) {
  std::vector<double> y(size_t(batch) * out);
  for (uint32_t b = 0; b < batch; ++b)
    for (uint32_t o = 0; o < out; ++o) {
      double s = 0;
      for (uint32_t i = 0; i < in; ++i) s += double(x[b * in + i]) * w[o * in + i];
      y[b * out + o] = s;
    }
  return y;
}
// dx[b,i] = sum_o dy[b,o] w[o,i]
inline std::vector<double> ref_backward_input(const std::vector<float>& dy, const std::vector<float>& w,
                                       uint32_t batch, uint32_t in, uint32_t out) {
  std::vector<double> dx(size_t(batch) * in);
  for (uint32_t b = 0; b < batch; ++b)
    for (uint32_t i = 0; i < in; ++i) {
      double s = 0;
      for (uint32_t o = 0; o < out; ++o) s += double(dy[b * out + o]) * w[o * in + i];
      dx[b * in + i] = s;
    }
  return dx;
}
// dw[o,i] = sum_b dy[b,o] x[b,i]
inline std::vector<double> ref_backward_weight(const std::vector<float>& dy, const std::vector<float>& x,
                                        uint32_t batch, uint32_t in, uint32_t out) {
  std::vector<double> dw(size_t(out) * in);
  for (uint32_t o = 0; o < out; ++o)
    for (uint32_t i = 0; i < in; ++i) {
      double s = 0;
      for (uint32_t b = 0; b < batch; ++b) s += double(dy[b * out + o]) * x[b * in + i];
      dw[o * in + i] = s;
    }
  return dw;
}

}  // namespace vkamp::test
