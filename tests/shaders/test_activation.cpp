// Every activation of gpu_abi/activation_list.h, forward y = f(x) and backward
// dx = dy * f'(x), against the references in double of support/reference.hpp
// at every format and size; inf, NaN and saturating inputs (NaN propagates
// both ways; ReLU's backward turns an inf or NaN dy at x <= 0 into NaN
// rather than hide it; no exp overflows into NaN); in place; and each
// backward against central differences of the F32 forward. Each test runs
// every activation of the list, so a new one needs no new test here.
#include <cmath>
#include <limits>

#include "support/cases.hpp"
#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "vkamp/ops/activation.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

using Act = ops::Activation;

// f(x), or dy * f'(x) when dy is given: an inf or NaN dy times a zero
// derivative is NaN, as the op promises.
std::vector<double> reference(Act act, const std::vector<float>& x, const std::vector<float>* dy) {
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    out[i] = dy ? (*dy)[i] * activation_grad_reference(act, x[i]) : activation_reference(act, x[i]);
  return out;
}

// Upstream gradients of either sign, |dy| in [0.25, 2).
std::vector<float> upstream(size_t n, Format fmt) {
  std::vector<float> dy = random_values(n, 0.25f, 2, fmt);
  for (float& v : dy) v = std::bernoulli_distribution()(rng()) ? v : -v;
  return dy;
}

class Activation : public GpuTestP<FormatSize> {
 protected:
  Format fmt() const { return std::get<0>(GetParam()); }
  uint32_t n() const { return std::get<1>(GetParam()); }

  // The op on the GPU in `f` into a poisoned output, or in place (over x
  // forward, over dy backward).
  std::vector<float> run(Format f, Act act, const std::vector<float>& x, const std::vector<float>* dy,
                         bool in_place = false) {
    uint32_t count = uint32_t(x.size());
    Buffer xb = upload(ctx(), f, x);
    Buffer dyb = dy ? upload(ctx(), f, *dy) : poisoned(ctx(), f, 1);
    Buffer out = poisoned(ctx(), f, count);
    const Buffer& result = !in_place ? out : dy ? dyb : xb;
    Sequence seq(ctx());
    seq.begin();
    if (dy) ops::activation_backward(seq, f, act, xb, dyb, result, count);
    else ops::activation_forward(seq, f, act, xb, result, count);
    seq.end();
    seq.run();
    return download(result, f, count);
  }

  double bound(Act act) const {
    // ReLU selects x, dy or 0: exact in any arithmetic, 0 ulps.
    if (act == Act::ReLU) return nmse_bound(fmt(), 0);
    // The others run in fp32 and round once to the format: 1 ulp. In fp32
    // itself, exp's error and e^(-2|u|) turning u's rounding into a relative
    // error 2|u| times larger (11 for GELU at x = -4) reach 28 ulps: 32.
    // Sigmoid and SiLU take exp(-|x|) of the exact x and round two or three
    // times more (SiLU' where its terms half cancel, 0.1 from its root,
    // about 30): within the same 32.
    return nmse_bound(fmt(), fmt() == Format::F32 ? 32 : 1);
  }

  // close_to, with an absolute term for results below the format's normal
  // range (a subnormal's spacing, or the whole value where a driver flushes).
  ::testing::AssertionResult matches(const std::vector<float>& out, const std::vector<double>& ref, Act act) const {
    return close_to(out, ref, bound(act), smallest_normal(fmt()));
  }

  void expect_matches(Act act, bool backward, bool in_place = false) {
    std::vector<float> x = draw_x(-4, 4, cancelling_root(act), backward ? 0.1 : 0), dy = upstream(n(), fmt());
    const std::vector<float>* g = backward ? &dy : nullptr;
    EXPECT_TRUE(matches(run(fmt(), act, x, g, in_place), reference(act, x, g), act));
  }

  // n values of the format in [lo, hi), none within `radius` of `point`.
  std::vector<float> draw_x(float lo, float hi, double point, double radius) {
    std::vector<float> x = random_values(n(), lo, hi, fmt());
    for (float& v : x)
      while (std::abs(v - point) < radius) v = random_values(1, lo, hi, fmt())[0];
    return x;
  }

  // dx against dy * (f(x + h) - f(x - h)) / 2h, f run in F32.
  void expect_matches_central_differences(Act act) {
    const double h = 1.0 / 128;  // balances O(h^2) truncation against the O(u/h) rounding
    // Off ReLU's kink: there f is not differentiable.
    std::vector<float> x = draw_x(-3, 3, 0, act == Act::ReLU ? 2 * h : 0), dy = upstream(n(), fmt());
    std::vector<float> plus(n()), minus(n());
    for (uint32_t i = 0; i < n(); ++i) {
      plus[i] = float(x[i] + h);
      minus[i] = float(x[i] - h);
    }
    std::vector<float> fp = run(Format::F32, act, plus, nullptr), fm = run(Format::F32, act, minus, nullptr);
    std::vector<float> dx = run(fmt(), act, x, &dy);
    // Measured against |dy|: f' is O(1) for all of them (a relative measure
    // would blow up where GELU' or SiLU' crosses zero). Truncation
    // (h^2/6 |f'''|) and the F32 forward's rounding (a few ulps over 2h)
    // stay below 1e-4 of f': allow 1e-8, far below any formula mistake; dx
    // rounds once (1 ulp).
    const double bound = nmse_bound(fmt(), 1) + 1e-8;
    double err = 0, norm = 0;
    for (uint32_t i = 0; i < n(); ++i) {
      double fd = dy[i] * (double(fp[i]) - fm[i]) / (double(plus[i]) - minus[i]);
      err += (dx[i] - fd) * (dx[i] - fd);
      norm += double(dy[i]) * dy[i];
    }
    EXPECT_LE(err / norm, bound) << "backward against central differences";
  }
};

TEST_P(Activation, Forward) {
  for (Act act : ops::kActivations) {
    SCOPED_TRACE(ops::activation_name(act));
    expect_matches(act, false);
  }
}

TEST_P(Activation, Backward) {
  for (Act act : ops::kActivations) {
    SCOPED_TRACE(ops::activation_name(act));
    expect_matches(act, true);
  }
}

TEST_P(Activation, InPlace) {
  for (Act act : ops::kActivations) {
    SCOPED_TRACE(ops::activation_name(act));
    expect_matches(act, false, true);
    expect_matches(act, true, true);
  }
}

TEST_P(Activation, InfNanAndSaturation) {
  const double max = format_max(fmt());
  // (x, dy) pairs: non-finite and extreme x with an ordinary dy (+-100 and
  // +-1000 are where a naive e^-x or e^x overflows in fp32, and sigmoid and
  // SiLU must give 0, 1 or x, never NaN), then non-finite dy at x on each
  // side of 0 and at 0.
  const std::pair<double, double> cases[] = {
      {kInf, 1.5},   {-kInf, 1.5},  {kNan, 1.5},  {max, 1.5},    {-max, 1.5},   {0.0, 1.5},    {-0.0, -1.5},
      {1.5, kNan},   {-1.5, kNan},  {0.0, kNan},  {1.5, kInf},   {-1.5, kInf},  {0.0, -kInf},  {-kInf, kInf},
      {kInf, -kInf}, {-max, kInf},  {max, kNan},  {100.0, 1.5},  {-100.0, 1.5}, {1000.0, -1.5}, {-1000.0, 1.5},
      {30.0, -1.5},  {-30.0, 1.5}};
  std::vector<float> x(n()), dy(n());
  for (uint32_t i = 0; i < n(); ++i) std::tie(x[i], dy[i]) = cases[i % std::size(cases)];
  for (Act act : ops::kActivations) {
    SCOPED_TRACE(ops::activation_name(act));
    EXPECT_TRUE(matches(run(fmt(), act, x, nullptr), reference(act, x, nullptr), act));
    EXPECT_TRUE(matches(run(fmt(), act, x, &dy), reference(act, x, &dy), act));
  }
}

TEST_P(Activation, GradientCheck) {
  for (Act act : ops::kActivations) {
    SCOPED_TRACE(ops::activation_name(act));
    expect_matches_central_differences(act);
  }
}

INSTANTIATE_TEST_SUITE_P(Shaders, Activation, all_formats_and_sizes(), format_size_name);

// The values users check first, exactly where the definitions give them
// exactly: sigmoid(0) = 1/2, sigmoid(+-inf) = 1 and 0, sigmoid(-100) is 0
// or a subnormal (never NaN), SiLU(0) = 0, SiLU(inf) = inf, and PyTorch's
// NaN for SiLU(-inf) = -inf * 0.
class ActivationValues : public GpuTest {};

TEST_F(ActivationValues, SigmoidAndSiluAtTheirLandmarks) {
  std::vector<float> x = {0.0f, float(kInf), float(-kInf), -100.0f, 100.0f, float(kNan)};
  auto run = [&](Act act) {
    Buffer xb = upload(ctx(), Format::F32, x), out = poisoned(ctx(), Format::F32, x.size());
    run_once([&](Sequence& seq) { ops::activation_forward(seq, Format::F32, act, xb, out, uint32_t(x.size())); });
    return download(out, Format::F32, x.size());
  };
  std::vector<float> s = run(Act::Sigmoid), silu = run(Act::SiLU);
  EXPECT_EQ(s[0], 0.5f);
  EXPECT_EQ(s[1], 1.0f);
  EXPECT_EQ(s[2], 0.0f);
  EXPECT_TRUE(s[3] >= 0.0f && s[3] < 1e-40f) << s[3];
  EXPECT_EQ(s[4], 1.0f);
  EXPECT_TRUE(std::isnan(s[5]));
  EXPECT_EQ(silu[0], 0.0f);
  EXPECT_EQ(silu[1], float(kInf));
  EXPECT_TRUE(std::isnan(silu[2])) << silu[2];
  EXPECT_TRUE(silu[3] <= 0.0f && silu[3] > -1e-38f) << silu[3];
  EXPECT_EQ(silu[4], 100.0f);
  EXPECT_TRUE(std::isnan(silu[5]));
}

}  // namespace
}  // namespace vkamp::test
