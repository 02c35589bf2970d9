// scale: y = x * factor * {1, s, 1/s}, s an fp32 value in a GPU buffer (the
// loss scale), against the product in double: constant factors, loss scale
// and unscale by 2^16 (not an fp16 value), in place, overflow to inf, and
// inf/NaN in x or in s.
#include <cmath>
#include <limits>

#include "support/cases.hpp"
#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "vkamp/ops/scale.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

using ops::ScaleBy;

// y = x * (factor * {1, s, 1/s}), grouped as the definition reads; a value
// past the format's range is stored as inf, finite ones stay exact.
std::vector<double> reference(Format fmt, const std::vector<float>& x, double factor, ScaleBy by, double s) {
  double f = by == ScaleBy::BufferValue ? factor * s : by == ScaleBy::BufferReciprocal ? factor / s : factor;
  std::vector<double> y;
  for (float v : x) y.push_back(std::isinf(round_reference(fmt, v * f)) ? round_reference(fmt, v * f) : v * f);
  return y;
}

class Scale : public GpuTestP<FormatSize> {
 protected:
  Format fmt() const { return std::get<0>(GetParam()); }
  uint32_t n() const { return std::get<1>(GetParam()); }

  // Runs the op into a poisoned output (or in place over x) and reads y back.
  std::vector<float> run(const std::vector<float>& x, float factor, ScaleBy by, float s, bool in_place = false) {
    Buffer xb = upload(ctx(), fmt(), x);
    Buffer yb = poisoned(ctx(), fmt(), x.size());
    Buffer sb = upload(ctx(), Format::F32, std::vector<float>{s});
    const Buffer& out = in_place ? xb : yb;
    Sequence seq(ctx());
    seq.begin();
    ops::scale(seq, fmt(), xb, out, uint32_t(x.size()), factor, by, by == ScaleBy::Constant ? nullptr : &sb);
    seq.end();
    seq.run();
    return download(out, fmt(), x.size());
  }

  void expect_scaled(const std::vector<float>& x, float factor, ScaleBy by, float s, double ulps,
                     bool in_place = false) {
    SCOPED_TRACE(::testing::Message() << "factor " << factor << ", s " << s << ", mode " << int(by));
    std::vector<float> y = run(x, factor, by, s, in_place);
    EXPECT_TRUE(close_to(y, reference(fmt(), x, factor, by, s), nmse_bound(fmt(), ulps)));
  }
};

TEST_P(Scale, ByConstant) {
  std::vector<float> x = random_values(n(), -1000, 1000, fmt());
  float factor = std::uniform_real_distribution<float>(-8, 8)(rng());
  // One fp32 rounding of the product, then one to the format: 1 ulp.
  expect_scaled(x, factor, ScaleBy::Constant, 0, 1);
}

TEST_P(Scale, ByBufferValue) {
  // 65536 is the usual initial loss scale, past fp16's range; the other s
  // is not a power of two, so the products really round.
  for (float s : {65536.0f, std::uniform_real_distribution<float>(1.5f, 1000)(rng())}) {
    std::vector<float> x = random_values(n(), -0.9f, 0.9f, fmt());
    // factor * s is rounded to fp32 before the product: 2 ulps.
    expect_scaled(x, 0.75f, ScaleBy::BufferValue, s, 2);
  }
}

TEST_P(Scale, ByBufferReciprocal) {
  // Unscaling: 1/65536 is below fp16's normal range, and 1/3 is inexact.
  for (float s : {65536.0f, 3.0f}) {
    std::vector<float> x = random_values(n(), -60000, 60000, fmt());
    // factor / s is rounded to fp32 before the product: 2 ulps.
    expect_scaled(x, 1.0f, ScaleBy::BufferReciprocal, s, 2);
  }
}

TEST_P(Scale, InPlace) {
  std::vector<float> x = random_values(n(), -100, 100, fmt());
  float s = std::uniform_real_distribution<float>(1.5f, 10)(rng());
  // factor * s and the product each round once in fp32, then the store: 2 ulps.
  expect_scaled(x, -0.5f, ScaleBy::BufferValue, s, 2, true);
}

TEST_P(Scale, OverflowsToInf) {
  // About half of these land past the largest finite value once doubled,
  // alternating in sign. Exact products, one rounding to the format: 1 ulp
  // (and the inf positions and signs must match exactly).
  std::vector<float> x = random_values(n(), 0.3f, 0.7f, Format::F32);
  for (size_t i = 0; i < x.size(); ++i) x[i] = round_to(fmt(), float(x[i] * format_max(fmt()) * (i % 2 ? -1 : 1)));
  expect_scaled(x, 2, ScaleBy::Constant, 0, 1);
  // The loss-scale case: a gradient times 2^16 past the format's range is inf, not clamped.
  for (float& v : x) v = round_to(fmt(), float(v / 32768.0));
  expect_scaled(x, 1, ScaleBy::BufferValue, 65536, 1);
}

TEST_P(Scale, PropagatesNanAndInf) {
  const float specials[] = {kInf, -kInf, kNan, 0.0f, -0.0f};
  std::vector<float> x = random_values(n(), -4, 4, fmt());
  for (size_t i = 0; i < x.size(); i += 2) x[i] = specials[(i / 2) % std::size(specials)];
  // Every non-finite input stays non-finite, with the sign of the product;
  // the finite ones are as in the tests above (2 ulps).
  expect_scaled(x, -1.5f, ScaleBy::Constant, 0, 2);
  expect_scaled(x, 1.0f, ScaleBy::BufferValue, 1024, 2);
  expect_scaled(x, 1.0f, ScaleBy::BufferReciprocal, 1024, 2);
  // A non-finite loss scale reaches every output: NaN everywhere, inf times
  // 0 is NaN, and a reciprocal of 0 is inf.
  expect_scaled(x, 1.0f, ScaleBy::BufferValue, kNan, 2);
  expect_scaled(x, 1.0f, ScaleBy::BufferReciprocal, kNan, 2);
  expect_scaled(x, 1.0f, ScaleBy::BufferValue, kInf, 2);
  expect_scaled(x, 1.0f, ScaleBy::BufferReciprocal, 0, 2);
}

INSTANTIATE_TEST_SUITE_P(Shaders, Scale, all_formats_and_sizes(), format_size_name);

}  // namespace
}  // namespace vkamp::test
