// quantize_row: ggml's bytes for every type on the fixture's rows
// (quantize_row_*_ref through ggml_quantize_chunk), the round trip within
// a bound derived from each format on fresh random rows, and readable
// refusals of inf, NaN and values whose scale fp16 cannot hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "quant/ggml_fixture.hpp"
#include "support/numerics.hpp"
#include "vkamp/quant/dequantize.hpp"
#include "vkamp/quant/quantize.hpp"

namespace vkamp::test {
namespace {

using quant::GgmlType;


std::vector<uint8_t> quantized(GgmlType t, const std::vector<float>& x) {
  std::vector<uint8_t> b(quant::ggml_row_bytes(t, x.size()));
  quant::quantize_row(t, x.data(), b.data(), x.size());
  return b;
}

TEST(GgmlQuantize, GgmlsBytesOnFixtureRows) {
  const GgmlFixture fx = load_ggml_fixture();
  for (const GgmlTypeFixture& t : fx.types) {
    SCOPED_TRACE(quant::ggml_type_info(t.type).name);
    for (size_t r = 0; r < fx.rows.size(); ++r) {
      const std::vector<uint8_t> ours = quantized(t.type, fx.rows[r]);
      EXPECT_EQ(ours, t.blocks[r]) << "row " << r;
      // ggml's dequantization of our blocks: dequantize_row is ggml's bit for
      // bit (test_dequantize.cpp), so this is the fixture's floats.
      std::vector<float> back(fx.values);
      quant::dequantize_row(t.type, ours.data(), back.data(), fx.values);
      EXPECT_EQ(bits_of(back), bits_of(t.dequantized[r])) << "row " << r;
    }
  }
}

// The most fp16 rounding moves a value v: half an ulp, 2^-11 |v| for
// normals, 2^-25 among the subnormals.
double fp16_err(double v) { return std::max(std::fabs(v) * std::ldexp(1.0, -11), std::ldexp(1.0, -25)); }

double max_abs(const float* x, int n) {
  double m = 0;
  for (int i = 0; i < n; ++i) m = std::max(m, double(std::fabs(x[i])));
  return m;
}

// Per value, the most |x - dequantized| can be. `b` is the block as stored
// (its fp16 scales bound the K types' sub-block scales).
std::vector<double> error_bounds(GgmlType t, const float* x, const uint8_t* b) {
  const auto& info = quant::ggml_type_info(t);
  std::vector<double> bound(info.block_values);
  const int n = int(info.block_values);
  const double amax = max_abs(x, n);
  // fp32's roundings in computing the codes and in d * q - m: a few ulps of the block's magnitude.
  const double fp32 = std::ldexp(amax, -20);
  const double lo = *std::min_element(x, x + n), hi = *std::max_element(x, x + n);
  auto fill = [&](double v) { std::fill(bound.begin(), bound.end(), v + fp32); };
  switch (t) {
    case GgmlType::F32: fill(0); return bound;
    case GgmlType::F16:
      for (int i = 0; i < n; ++i) bound[i] = fp16_err(x[i]);
      return bound;
    case GgmlType::BF16:  // 8 significant bits: half an ulp is 2^-8 |x|
      for (int i = 0; i < n; ++i) bound[i] = std::ldexp(std::fabs(x[i]), -8) + 1e-38;
      return bound;
    // d = -max / 2^(bits-1): codes round x / d, but the opposite extreme
    // (code 2^bits) is capped one step short; |code| <= 2^(bits-1) carries d's fp16 error.
    case GgmlType::Q4_0: fill(amax / 8 + 8 * fp16_err(amax / 8)); return bound;
    case GgmlType::Q5_0: fill(amax / 16 + 16 * fp16_err(amax / 16)); return bound;
    // d = max |x| / 127, codes round(x / d): half a step, and 127 times d's fp16 error.
    case GgmlType::Q8_0: fill(amax / 127 / 2 + 127 * fp16_err(amax / 127)); return bound;
    // d = (max - min) / (2^bits - 1), codes round((x - min) / d): half a
    // step, the codes times d's fp16 error, and min's.
    case GgmlType::Q4_1: fill((hi - lo) / 15 / 2 + 15 * fp16_err((hi - lo) / 15) + fp16_err(lo)); return bound;
    case GgmlType::Q5_1: fill((hi - lo) / 31 / 2 + 31 * fp16_err((hi - lo) / 31) + fp16_err(lo)); return bound;
    default: break;
  }
  if (t == GgmlType::Q6_K) {
    // Per 16 values: make_qx_quants' first trial scale amax_j / 32 puts each
    // value within one step (the cap at code 31), and it keeps only trials
    // with a smaller x^2-weighted error, so x_i^2 e_i^2 <= sum x^2 step^2.
    // The int8 scales are then multiples of D = max scale / 128, off by at
    // most D (the cap at 127) plus D's fp16 error times 128, times |code| <= 32;
    // the final codes are the nearest on that grid, no worse than keeping the old.
    const double d = std::fabs(quant::ggml_fp16_to_f32(uint16_t(b[208] | (b[209] << 8))));
    const double big_d = d + fp16_err(d);
    for (int j = 0; j < 16; ++j) {
      const float* xs = x + 16 * j;
      double sum2 = 0;
      for (int i = 0; i < 16; ++i) sum2 += double(xs[i]) * xs[i];
      const double step = max_abs(xs, 16) / 32;
      for (int i = 0; i < 16; ++i) {
        const double first = xs[i] == 0 ? 0 : step * std::sqrt(sum2) / std::fabs(xs[i]);
        bound[16 * j + i] = std::min(first, 2 * max_abs(xs, 16)) + 32 * (big_d + 128 * fp16_err(big_d)) + fp32;
      }
    }
    return bound;
  }
  // Q4_K / Q5_K, per 32 values: make_qkx2_quants' first trial (scale
  // (max - min(min, 0)) / nmax) puts each value within half a step, and it
  // keeps only trials with a smaller weighted error (w = rms + |x|), so
  // w_i e_i^2 <= sum w step^2 / 4. The 6-bit scales and mins are then
  // multiples of d and dmin (the block's fp16 values), off by half of one
  // plus 63 times its fp16 error; a scale error moves a value by up to nmax times it.
  const int nmax = t == GgmlType::Q4_K ? 15 : 31;
  auto half_at = [&](int off) { return std::fabs(quant::ggml_fp16_to_f32(uint16_t(b[off] | (b[off + 1] << 8)))); };
  const double d = half_at(0) + fp16_err(half_at(0)), dmin = half_at(2) + fp16_err(half_at(2));
  const double scales = nmax * (d / 2 + 63 * fp16_err(d)) + dmin / 2 + 63 * fp16_err(dmin);
  for (int j = 0; j < 8; ++j) {
    const float* xs = x + 32 * j;
    double sum2 = 0;
    for (int i = 0; i < 32; ++i) sum2 += double(xs[i]) * xs[i];
    const double rms = std::sqrt(sum2 / 32);
    double sum_w = 0;
    for (int i = 0; i < 32; ++i) sum_w += rms + std::fabs(xs[i]);
    const double step = (*std::max_element(xs, xs + 32) - std::min(0.0f, *std::min_element(xs, xs + 32))) / nmax;
    for (int i = 0; i < 32; ++i) {
      const double w = rms + std::fabs(xs[i]);
      bound[32 * j + i] = (w > 0 ? std::sqrt(sum_w / w) * step / 2 : 0) + scales + fp32;
    }
  }
  return bound;
}

// Fresh rows: Gaussian, each block at its own magnitude (1e-5 .. 1e3) with
// zeros, and an offset one (all positive).
std::vector<std::vector<float>> fresh_rows(size_t n) {
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<float> exponent(-5, 3), uniform(0.5f, 2.0f);
  std::vector<std::vector<float>> rows(3, std::vector<float>(n));
  for (size_t i = 0; i < n; ++i) rows[0][i] = normal(rng());
  float scale = 1;
  for (size_t i = 0; i < n; ++i) {
    if (i % 32 == 0) scale = std::pow(10.0f, exponent(rng()));
    rows[1][i] = i % 7 == 3 ? 0.0f : normal(rng()) * scale;
  }
  for (size_t i = 0; i < n; ++i) rows[2][i] = uniform(rng()) + 3;
  return rows;
}

TEST(GgmlQuantize, RoundTripWithinTheFormatsBound) {
  constexpr size_t n = 4096;
  for (GgmlType t : kAllGgmlTypes) {
    SCOPED_TRACE(quant::ggml_type_info(t).name);
    const auto& info = quant::ggml_type_info(t);
    for (const std::vector<float>& x : fresh_rows(n)) {
      const std::vector<uint8_t> b = quantized(t, x);
      std::vector<float> back(n);
      quant::dequantize_row(t, b.data(), back.data(), n);
      size_t bad = 0;
      double worst = 0;  // the largest error as a fraction of its bound
      for (size_t blk = 0; blk < n / info.block_values; ++blk) {
        const size_t at = blk * info.block_values;
        const std::vector<double> bound = error_bounds(t, x.data() + at, b.data() + blk * info.block_bytes);
        for (size_t k = 0; k < info.block_values; ++k) {
          const double err = std::fabs(double(back[at + k]) - x[at + k]);
          if (!(err <= bound[k])) ++bad;
          if (bound[k] > 0) worst = std::max(worst, err / bound[k]);
        }
      }
      EXPECT_EQ(bad, 0u) << "values past their bound; worst error/bound " << worst;
    }
  }
}

TEST(GgmlQuantize, RefusesNonFiniteValues) {
  for (GgmlType t : kAllGgmlTypes) {
    for (float bad : {kInf, -kInf, kNan}) {
      std::vector<float> x(256, 0.5f);
      x[37] = bad;
      std::vector<uint8_t> b(quant::ggml_row_bytes(t, 256));
      try {
        quant::quantize_row(t, x.data(), b.data(), 256);
        ADD_FAILURE() << quant::ggml_type_info(t).name << " took " << bad;
      } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(quant::ggml_type_info(t).name), std::string::npos) << what;
        EXPECT_NE(what.find("value 37"), std::string::npos) << what;
        EXPECT_NE(what.find(std::isnan(bad) ? "NaN" : "inf"), std::string::npos) << what;
      }
    }
  }
}

TEST(GgmlQuantize, RefusesValuesPastTheScalesRange) {
  // Each type's largest fp16 scale times its largest code: past it the
  // scale would be stored as inf.
  for (GgmlType t : {GgmlType::F16, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                     GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
    std::vector<float> x(256, 1.0f);
    x[3] = 1e9f;  // past 65504 * 128 * 32 (Q6_K's largest d * scale * code), the most of any
    std::vector<uint8_t> b(quant::ggml_row_bytes(t, 256));
    EXPECT_THROW(quant::quantize_row(t, x.data(), b.data(), 256), std::invalid_argument) << quant::ggml_type_info(t).name;
  }
  std::vector<float> x(256, -3e38f);  // bf16 holds it (fp32's range)
  std::vector<uint8_t> b(512);
  EXPECT_NO_THROW(quant::quantize_row(GgmlType::BF16, x.data(), b.data(), 256));
  x[9] = 3.4e38f;  // finite in fp32, but rounds to bf16's inf
  EXPECT_THROW(quant::quantize_row(GgmlType::BF16, x.data(), b.data(), 256), std::invalid_argument);
}

TEST(GgmlQuantize, RejectsPartialBlocks) {
  std::vector<float> x(100);
  std::vector<uint8_t> b(210);
  EXPECT_THROW(quant::quantize_row(GgmlType::Q8_0, x.data(), b.data(), 100), std::invalid_argument);
}

// The cores share a tensor's blocks: the same bytes as one quantize_row,
// and a bad value still names its type.
TEST(GgmlQuantize, InParallelGivesTheSameBytes) {
  std::mt19937 gen(5);
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> x(256 * 301);
  for (float& v : x) v = normal(gen);
  for (quant::GgmlType t : {quant::GgmlType::Q4_K, quant::GgmlType::Q8_0, quant::GgmlType::Q6_K}) {
    std::vector<uint8_t> one(quant::ggml_row_bytes(t, x.size())), many(one.size());
    quant::quantize_row(t, x.data(), one.data(), x.size());
    quant::quantize_rows_in_parallel(t, x.data(), many.data(), x.size());
    EXPECT_EQ(one, many) << quant::ggml_type_info(t).name;
  }
  x[256 * 300 + 3] = std::nanf("");
  std::vector<uint8_t> out(quant::ggml_row_bytes(quant::GgmlType::Q4_K, x.size()));
  EXPECT_THROW(quant::quantize_rows_in_parallel(quant::GgmlType::Q4_K, x.data(), out.data(), x.size()),
               std::invalid_argument);
}

}  // namespace
}  // namespace vkamp::test
