// Elementwise add (the residual op, and the sum of a fan-out's gradients)
// against a double reference at the awkward sizes, into poisoned outputs;
// in place (y = a); inf and NaN reach the sum; backward copies or adds dy.
#include <cmath>
#include <limits>

#include "support/cases.hpp"
#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "vkamp/ops/add.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

std::vector<double> sum_of(const std::vector<float>& a, const std::vector<float>& b, Format fmt) {
  std::vector<double> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = round_reference(fmt, double(a[i]) + b[i]);
  return out;
}

class Add : public GpuTestP<FormatSize> {
 protected:
  Format fmt() const { return std::get<0>(GetParam()); }
  uint32_t n() const { return std::get<1>(GetParam()); }

  std::vector<float> forward(const std::vector<float>& a, const std::vector<float>& b, bool in_place) {
    Buffer ab = upload(ctx(), fmt(), a), bb = upload(ctx(), fmt(), b), yb = poisoned(ctx(), fmt(), n());
    Sequence seq(ctx());
    seq.begin();
    ops::add_forward(seq, fmt(), ab, bb, in_place ? BufferView(ab) : BufferView(yb), n());
    seq.end();
    seq.run();
    return download(in_place ? ab : yb, fmt(), n());
  }

  std::vector<float> backward(const std::vector<float>& dy, const std::vector<float>* dx) {
    Buffer dyb = upload(ctx(), fmt(), dy);
    Buffer dxb = dx ? upload(ctx(), fmt(), *dx) : poisoned(ctx(), fmt(), n());
    Sequence seq(ctx());
    seq.begin();
    ops::add_backward(seq, fmt(), dyb, dxb, n(), dx != nullptr);
    seq.end();
    seq.run();
    return download(dxb, fmt(), n());
  }
};

TEST_P(Add, Forward) {
  auto a = random_values(n(), -4, 4, fmt()), b = random_values(n(), 1, 3, fmt());
  // One rounding of the exact sum: 1 ulp.
  EXPECT_TRUE(close_to(forward(a, b, false), sum_of(a, b, fmt()), nmse_bound(fmt(), 1)));
}

TEST_P(Add, ForwardInPlace) {
  auto a = random_values(n(), -4, 4, fmt()), b = random_values(n(), 1, 3, fmt());
  EXPECT_TRUE(close_to(forward(a, b, true), sum_of(a, b, fmt()), nmse_bound(fmt(), 1)));
}

TEST_P(Add, ForwardPropagatesInfAndNan) {
  const float max = float(format_max(fmt()));
  const float special[] = {kInf, -kInf, kNan, max};
  auto a = random_values(n(), -4, 4, fmt()), b = random_values(n(), 1, 3, fmt());
  for (size_t i = 0; i < a.size(); i += 2) a[i] = special[(i / 2) % std::size(special)];
  b[n() - 1] = kNan;
  if (n() > 1) b[0] = -kInf;  // meets a[0] = inf: NaN
  // max + b is past the range for b >= 1 ulp: inf, as the reference rounds it.
  EXPECT_TRUE(close_to(forward(a, b, false), sum_of(a, b, fmt()), nmse_bound(fmt(), 1)));
}

TEST_P(Add, BackwardCopiesTheGradient) {
  auto dy = random_values(n(), -4, 4, fmt());
  dy[0] = kNan;
  std::vector<double> ref(dy.begin(), dy.end());
  EXPECT_TRUE(close_to(backward(dy, nullptr), ref, 0.0));
}

TEST_P(Add, BackwardAccumulates) {
  auto dy = random_values(n(), -4, 4, fmt()), dx = random_values(n(), 1, 3, fmt());
  dy[n() / 2] = kInf;
  EXPECT_TRUE(close_to(backward(dy, &dx), sum_of(dx, dy, fmt()), nmse_bound(fmt(), 1)));
}

INSTANTIATE_TEST_SUITE_P(Shaders, Add, all_formats_and_sizes(), format_size_name);
// A real model's residual: 128 tokens of Llama 3 8B's hidden 4,096.
INSTANTIATE_TEST_SUITE_P(RealSize, Add,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::Values(128u * 4096)),
                         format_size_name);

}  // namespace
}  // namespace vkamp::test
