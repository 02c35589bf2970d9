// Test numerics: fresh random inputs, poisoned outputs, and the comparison
// against a double-precision CPU reference (ggml's normalised error, NMSE =
// mse(out, ref) / mse(ref, 0), with a bound per storage format).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/context.hpp"
#include "vkamp/float_formats.hpp"

namespace vkamp::test {

// inf and a quiet NaN for the tests' inputs (each converts exactly to
// double where a reference wants one).
inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// Every byte pattern 0x7FC0 / 0x7FC07FC0 is a NaN in each of our formats, so
// a poisoned element that the shader never wrote cannot pass.
inline constexpr uint32_t kPoison = 0x7FC07FC0u;

// A generator seeded afresh for each test (from std::random_device, or from
// $VKAMP_TEST_SEED to replay); the seed is recorded in the test's output.
std::mt19937_64& rng();

// n uniform values in [lo, hi), already rounded to the format, so the CPU
// reference sees exactly what the GPU sees.
std::vector<float> random_values(size_t n, float lo, float hi, Format fmt);

// Normalised error bound for an op whose output is rounded to `fmt` once
// after fp32 math; `ulps` scales it for ops with more rounding steps.
double nmse_bound(Format fmt, double ulps = 1.0);

// Output against reference: the same inf/NaN positions (with inf signs),
// never a NaN where the reference is finite, and NMSE over the finite
// entries within `bound`.
// abs_error: what a rounding may err by where the result is below the
// format's normal range, whatever its size (smallest_normal(): the
// subnormal spacing, or the whole value where a driver flushes), so that a
// tiny product does not fail a relative bound: each finite element adds
// abs_error^2 to the error budget.
::testing::AssertionResult close_to(std::span<const float> out, std::span<const double> ref, double bound,
                                    double abs_error = 0);

// A device buffer holding `values` in `fmt`.
Buffer upload(Context& ctx, Format fmt, std::span<const float> values);
// A device buffer of n elements of fmt, every one poisoned.
Buffer poisoned(Context& ctx, Format fmt, size_t n);
// The first n elements of a buffer in fmt, as floats.
std::vector<float> download(const Buffer& b, Format fmt, size_t n);

}  // namespace vkamp::test
