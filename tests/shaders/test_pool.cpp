// 2-D max and average pooling (NHWC, no padding), forward and backward,
// against double references written from the definitions; ties in a max
// window go to the first maximal input; NaN, inf and -inf in x and dy
// (a NaN window's forward is NaN, its backward routes NaN to its first
// NaN); and both backwards against central differences of the fp32
// forward. Shapes: overlapping windows (stride < window), non-overlapping,
// windows with gaps between them (stride > window), windows that leave the
// last rows and columns out, a window as large as the input, odd channel
// counts, batch 1. Non-overlapping windows have two backwards (a gather and
// one thread per window, VKAMP_POOL_GRAD): the same bits, checked here.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "vkamp/error.hpp"
#include "vkamp/ops/pool.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

using ops::PoolKind;

struct PoolShape {
  uint32_t n, h, w, c, window, stride;
};

constexpr PoolShape kShapes[] = {
    {1, 7, 9, 3, 3, 2},     // overlapping 3x3 windows at stride 2
    {2, 28, 28, 6, 2, 2},   // LeNet's first pool
    {3, 5, 6, 7, 2, 1},     // stride 1: each input in up to 4 windows
    {1, 1, 1, 1, 1, 1},     // one element
    {2, 9, 9, 4, 3, 3},     // non-overlapping 3x3
    {1, 10, 11, 16, 2, 2},  // odd width: the last column is in no window
    {1, 4, 4, 2, 4, 1},     // one window over the whole input
    {2, 8, 7, 5, 3, 1},     // up to 9 windows per input
    {2, 11, 10, 3, 2, 3},   // stride 3 > window 2: gaps between windows
    {1, 8, 7, 5, 1, 2},     // 1x1 windows at stride 2, the last row in none
};

using FormatPool = std::tuple<Format, PoolShape>;

std::string shape_name(const PoolShape& s) {
  return "n" + std::to_string(s.n) + "_h" + std::to_string(s.h) + "w" + std::to_string(s.w) + "c" +
         std::to_string(s.c) + "_win" + std::to_string(s.window) + "s" + std::to_string(s.stride);
}

ops::Pool2d pool_of(const PoolShape& s, PoolKind kind) {
  ops::Pool2d p;
  p.kind = kind;
  p.batch = s.n;
  p.in_h = s.h;
  p.in_w = s.w;
  p.channels = s.c;
  p.window = s.window;
  p.stride = s.stride;
  return p;
}

// The input indices of output j's window, in row-major order, for every j.
std::vector<std::vector<size_t>> windows(const ops::Pool2d& p) {
  std::vector<std::vector<size_t>> win;
  win.reserve(p.output_elements());
  for (uint32_t n = 0; n < p.batch; ++n)
    for (uint32_t oy = 0; oy < p.out_h(); ++oy)
      for (uint32_t ox = 0; ox < p.out_w(); ++ox)
        for (uint32_t c = 0; c < p.channels; ++c) {
          win.emplace_back();
          for (uint32_t ky = 0; ky < p.window; ++ky)
            for (uint32_t kx = 0; kx < p.window; ++kx) {
              size_t y = size_t(oy) * p.stride + ky, x = size_t(ox) * p.stride + kx;
              win.back().push_back(((size_t(n) * p.in_h + y) * p.in_w + x) * p.channels + c);
            }
        }
  return win;
}

// Where max pooling sends window w's gradient: its first NaN if it holds
// one, else its first maximal element.
size_t max_target(const std::vector<size_t>& w, const std::vector<float>& x, bool* has_nan) {
  *has_nan = false;
  for (size_t i : w)
    if (std::isnan(x[i])) {
      *has_nan = true;
      return i;
    }
  size_t best = w[0];
  for (size_t i : w)
    if (x[i] > x[best]) best = i;
  return best;
}

struct Ref {
  std::vector<double> v;
  double bound = 0;
};

// Max: NaN if the window holds one, else its largest value: exact (0 ulps).
// Average: sum x / window^2; the engine sums x * (1 / window^2) in fp32
// (the reciprocal and each product rounded once) and rounds once.
Ref ref_forward(Format fmt, const ops::Pool2d& p, const std::vector<float>& x) {
  Ref ref;
  ErrorBudget budget(fmt);
  const double area = double(p.window) * p.window;
  for (const auto& w : windows(p)) {
    if (p.kind == PoolKind::Max) {
      bool nan;
      size_t at = max_target(w, x, &nan);
      ref.v.push_back(nan ? kNan : x[at]);
    } else {
      double s = 0, a = 0;
      for (size_t i : w) {
        s += x[i];
        a += std::abs(double(x[i]));
      }
      ref.v.push_back(s / area);
      budget.add(s / area, budget.rounded(s / area), (std::sqrt(area + 1) + 2) * a / area);
    }
  }
  ref.bound = p.kind == PoolKind::Max ? nmse_bound(fmt, 0) : budget.bound();
  return ref;
}

// Max: dy[j] to window j's target (NaN if the window holds a NaN).
// Average: dy[j] / window^2 to every input of window j. Inputs gather their
// terms in fp32 and round once.
Ref ref_backward(Format fmt, const ops::Pool2d& p, const std::vector<float>& x, const std::vector<float>& dy) {
  const double area = double(p.window) * p.window;
  const size_t n = p.input_elements();
  std::vector<double> dx(n, 0.0), abs_sum(n, 0.0), terms(n, 0.0);
  auto win = windows(p);
  for (size_t j = 0; j < win.size(); ++j) {
    if (p.kind == PoolKind::Max) {
      bool nan;
      size_t at = max_target(win[j], x, &nan);
      dx[at] += nan ? kNan : dy[j];
      abs_sum[at] += std::abs(double(dy[j]));
      terms[at] += 1;
    } else {
      for (size_t i : win[j]) {
        dx[i] += dy[j] / area;
        abs_sum[i] += std::abs(double(dy[j])) / area;
        terms[i] += 1;
      }
    }
  }
  ErrorBudget budget(fmt);
  for (size_t i = 0; i < n; ++i)
    budget.add(dx[i], budget.rounded(dx[i]),
               (std::sqrt(terms[i] + 1) + (p.kind == PoolKind::Average ? 2 : 0)) * abs_sum[i]);
  return {dx, budget.bound()};
}

class Pool : public GpuTestP<FormatPool> {
 protected:
  Format fmt() const { return std::get<0>(GetParam()); }
  ops::Pool2d pool(PoolKind kind) const { return pool_of(std::get<1>(GetParam()), kind); }

  std::vector<float> forward(Format f, const ops::Pool2d& p, const std::vector<float>& x) {
    Buffer bx = guarded_input(f, x), y = guarded_output(f, p.output_elements());
    run_once([&](Sequence& seq) { ops::pool2d_forward(seq, f, p, bx, y); });
    return guarded_result(y, f, p.output_elements(), "y");
  }
  std::vector<float> backward(const ops::Pool2d& p, const std::vector<float>& x, const std::vector<float>& dy) {
    Buffer bx = guarded_input(fmt(), x), bdy = guarded_input(fmt(), dy), dx = guarded_output(fmt(), p.input_elements());
    run_once([&](Sequence& seq) { ops::pool2d_backward(seq, fmt(), p, bx, bdy, dx); });
    return guarded_result(dx, fmt(), p.input_elements(), "dx");
  }

  void expect_forward(PoolKind kind) {
    ops::Pool2d p = pool(kind);
    auto x = random_values(p.input_elements(), -1, 1, fmt());
    EXPECT_TRUE(close_to(forward(fmt(), p, x), ref_forward(fmt(), p, x).v, ref_forward(fmt(), p, x).bound));
  }
  void expect_backward(PoolKind kind) {
    ops::Pool2d p = pool(kind);
    auto x = random_values(p.input_elements(), -1, 1, fmt());
    auto dy = random_values(p.output_elements(), -1, 1, fmt());
    Ref ref = ref_backward(fmt(), p, x, dy);
    std::vector<float> dx = backward(p, x, dy);
    EXPECT_TRUE(close_to(dx, ref.v, ref.bound));
    // Inputs in no window get exactly 0.
    std::vector<bool> in_window(p.input_elements(), false);
    for (const auto& w : windows(p))
      for (size_t i : w) in_window[i] = true;
    for (size_t i = 0; i < dx.size(); ++i)
      if (!in_window[i]) {
        EXPECT_EQ(dx[i], 0.0f) << "dx at input " << i << ", in no window";
      }
  }
};

TEST_P(Pool, MaxForward) { expect_forward(PoolKind::Max); }
TEST_P(Pool, AvgForward) { expect_forward(PoolKind::Average); }
TEST_P(Pool, MaxBackward) { expect_backward(PoolKind::Max); }
TEST_P(Pool, AvgBackward) { expect_backward(PoolKind::Average); }

// Inputs from {-1, -0, 0, 1}: nearly every window has tied maxima, and
// the gradient must go to the first of them (row-major), and only there.
TEST_P(Pool, MaxBreaksTiesAtTheFirst) {
  ops::Pool2d p = pool(PoolKind::Max);
  const float choices[] = {-1.0f, -0.0f, 0.0f, 1.0f};
  std::vector<float> x(p.input_elements());
  for (float& v : x) v = choices[std::uniform_int_distribution<int>(0, 3)(rng())];
  // |dy| >= 0.5: a gradient sent to the wrong tied input cannot pass.
  auto dy = random_values(p.output_elements(), 0.5f, 2, fmt());
  Ref fwd = ref_forward(fmt(), p, x), bwd = ref_backward(fmt(), p, x, dy);
  EXPECT_TRUE(close_to(forward(fmt(), p, x), fwd.v, fwd.bound));
  EXPECT_TRUE(close_to(backward(p, x, dy), bwd.v, bwd.bound));
}

// Counts of NaN entries.
size_t nans(const std::vector<double>& v) { return size_t(std::count_if(v.begin(), v.end(), [](double e) { return std::isnan(e); })); }

TEST_P(Pool, PropagatesInfAndNan) {
  for (PoolKind kind : {PoolKind::Max, PoolKind::Average}) {
    SCOPED_TRACE(kind == PoolKind::Max ? "max" : "average");
    ops::Pool2d p = pool(kind);
    auto win = windows(p);
    auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng()); };
    // x: one window all -inf (its max is -inf, and its gradient goes to its
    // first element), then inf, -inf and NaN at inputs of random windows
    // (NaN last, so that nothing overwrites it).
    auto x = random_values(p.input_elements(), -1, 1, fmt());
    for (size_t i : win[pick(win.size())]) x[i] = -kInf;
    for (float v : {kInf, -kInf, kNan}) {
      const auto& w = win[pick(win.size())];
      x[w[pick(w.size())]] = v;
    }
    auto dy = random_values(p.output_elements(), -1, 1, fmt());
    {
      SCOPED_TRACE("forward");
      Ref ref = ref_forward(fmt(), p, x);
      ASSERT_GT(nans(ref.v), 0u);
      EXPECT_TRUE(close_to(forward(fmt(), p, x), ref.v, ref.bound));
    }
    {
      // Max: NaN at the NaN input, the window's dy at the inf input and at
      // the -inf window's first element. Average never reads x: dx stays finite.
      SCOPED_TRACE("backward, specials in x");
      Ref ref = ref_backward(fmt(), p, x, dy);
      if (kind == PoolKind::Max) {
        ASSERT_GT(nans(ref.v), 0u);
      }
      EXPECT_TRUE(close_to(backward(p, x, dy), ref.v, ref.bound));
    }
    {
      SCOPED_TRACE("backward, specials in dy");
      auto xf = random_values(p.input_elements(), -1, 1, fmt());
      auto g = dy;
      std::vector<size_t> at(g.size());
      for (size_t i = 0; i < at.size(); ++i) at[i] = i;
      std::shuffle(at.begin(), at.end(), rng());
      const float specials[] = {kNan, kInf, -kInf};
      for (size_t j = 0; j < std::min<size_t>(3, at.size()); ++j) g[at[j]] = specials[j];
      Ref ref = ref_backward(fmt(), p, xf, g);
      ASSERT_GT(nans(ref.v), 0u);
      EXPECT_TRUE(close_to(backward(p, xf, g), ref.v, ref.bound));
    }
  }
}

// Non-overlapping windows: the gather and the per-window backward give the
// same bits, with ties, NaN, inf and -inf in x, specials and -0 in dy (a
// term added to 0.0 turns -0 into +0 both ways).
class PoolWindows : public Pool {};

// ctx() runs the backward per window or per input while `use` lives.
void window_paths(std::optional<UsePaths>& use, bool per_window) {
  KernelPaths p;
  p.pool_grad_window = per_window;
  use.reset();
  use.emplace(p);
}

TEST_P(PoolWindows, GatherAndPerWindowGiveTheSameBits) {
  std::optional<UsePaths> use;
  for (PoolKind kind : {PoolKind::Max, PoolKind::Average}) {
    SCOPED_TRACE(kind == PoolKind::Max ? "max" : "average");
    ops::Pool2d p = pool(kind);
    auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng()); };
    // x: values from {-1, -0, 0, 1} (ties in most windows), one in eight
    // from {inf, -inf, NaN}. dy: one in four from {-0, 0, inf, -inf, NaN},
    // and -0 first.
    const float ties[] = {-1.0f, -0.0f, 0.0f, 1.0f}, specials[] = {kInf, -kInf, kNan};
    const float dy_specials[] = {-0.0f, 0.0f, kInf, -kInf, kNan};
    std::vector<float> x(p.input_elements()), dy = random_values(p.output_elements(), -1, 1, fmt());
    for (float& v : x) v = pick(8) == 0 ? specials[pick(3)] : ties[pick(4)];
    for (float& v : dy)
      if (pick(4) == 0) v = dy_specials[pick(5)];
    dy[0] = -0.0f;
    window_paths(use, false);
    std::vector<float> gather = backward(p, x, dy);
    window_paths(use, true);
    std::vector<float> window = backward(p, x, dy);
    ASSERT_EQ(gather.size(), window.size());
    EXPECT_EQ(0, std::memcmp(gather.data(), window.data(), gather.size() * sizeof(float)));
  }
}

// The bits of the quiet NaN the shaders write (nonfinite.glsl's
// kQuietNanBits), as `fmt` stores it and download() reads it back.
uint32_t canonical_nan_bits(Format fmt) {
  return std::bit_cast<uint32_t>(round_to(fmt, std::bit_cast<float>(0x7FC00000u)));
}

// Every NaN either backward writes is the canonical quiet NaN, whatever NaN
// dy held (here a negative one with a payload, kept by bf16's and fp32's
// storage): drivers differ in the NaN that arithmetic on a NaN returns
// (NVIDIA gives 0x7FFFFFFF for 0.0 + NaN, x86 keeps the payload), and the
// two ways must agree bit for bit on every driver.
TEST_P(PoolWindows, NanGradientsAreTheCanonicalQuietNan) {
  std::optional<UsePaths> use;
  const float payload_nan = std::bit_cast<float>(0xFFC12345u);
  const uint32_t want = canonical_nan_bits(fmt());
  for (PoolKind kind : {PoolKind::Max, PoolKind::Average}) {
    ops::Pool2d p = pool(kind);
    std::vector<float> x = random_values(p.input_elements(), -1, 1, fmt());
    x[0] = kNan;  // the first window also takes the has-NaN route
    std::vector<float> dy(p.output_elements(), payload_nan);
    for (bool per_window : {false, true}) {
      SCOPED_TRACE(std::string(kind == PoolKind::Max ? "max, " : "average, ") + (per_window ? "window" : "gather"));
      window_paths(use, per_window);
      std::vector<float> dx = backward(p, x, dy);
      size_t nans = 0;
      for (size_t i = 0; i < dx.size(); ++i)
        if (std::isnan(dx[i])) {
          ++nans;
          ASSERT_EQ(std::bit_cast<uint32_t>(dx[i]), want) << "element " << i;
        }
      EXPECT_GE(nans, p.output_elements()) << "every window passes its NaN on";
    }
  }
}

// Central differences of L = sum(G .* pool(x)) with the forward in fp32,
// against <dx, step> with dx from the backward in the format under test.
// Average pooling is linear in x: any step is exact up to rounding, so
// h = 0.5. Max pooling is linear in x as long as no window's order
// changes: x takes values k/32 (exact in every format), distinct within
// every window, and the step moves each by at most 1/128, so L(x + hv) -
// L(x - hv) is exact; the max itself rounds nothing.
// The tolerance is 10 standard deviations of the rounding noise (each
// element's budget, independent between elements), and must stay far
// below the size of the terms of <dx, step>.
class PoolGrad : public Pool {
 protected:
  void expect_matches_central_differences(PoolKind kind) {
    const Format f32 = Format::F32;
    ops::Pool2d p = pool(kind);
    const double area = double(p.window) * p.window;
    std::vector<float> x = kind == PoolKind::Max ? distinct_in_windows(p) : random_values(p.input_elements(), -1, 1, fmt());
    auto g = random_values(p.output_elements(), -1, 1, fmt());
    const float h = kind == PoolKind::Max ? 1.0f / 128 : 0.5f;
    std::vector<float> xp(x.size()), xm(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      float v = random_values(1, 0.5f, 1.0f, f32)[0];
      if (std::bernoulli_distribution(0.5)(rng())) v = -v;
      xp[i] = x[i] + h * v;
      xm[i] = x[i] - h * v;
    }
    auto loss = [&](const std::vector<float>& xs, double* noise) {
      std::vector<float> y = forward(f32, p, xs);
      double l = 0, var = 0;
      auto win = windows(p);
      for (size_t j = 0; j < y.size(); ++j) {
        l += double(g[j]) * y[j];
        if (kind == PoolKind::Average) {
          double a = 0;
          for (size_t i : win[j]) a += std::abs(double(xs[i]));
          var += std::pow(g[j] * unit_roundoff(f32) * ((std::sqrt(area + 1) + 2) * a / area + std::abs(y[j])), 2);
        }
      }
      *noise += std::sqrt(var);
      return l;
    };
    double noise = 0;
    double fd = loss(xp, &noise) - loss(xm, &noise);
    std::vector<float> dx = backward(p, x, g);

    // Each dx's error: one rounding to the format, and its fp32 sum.
    std::vector<double> abs_sum(dx.size(), 0.0), terms(dx.size(), 0.0);
    auto win = windows(p);
    for (size_t j = 0; j < win.size(); ++j) {
      bool nan;
      if (kind == PoolKind::Max) {
        size_t at = max_target(win[j], x, &nan);
        abs_sum[at] += std::abs(double(g[j]));
        terms[at] += 1;
      } else {
        for (size_t i : win[j]) {
          abs_sum[i] += std::abs(double(g[j])) / area;
          terms[i] += 1;
        }
      }
    }
    double dot = 0, terms2 = 0, var = 0;
    for (size_t i = 0; i < dx.size(); ++i) {
      double st = double(xp[i]) - xm[i];  // the step actually taken
      dot += dx[i] * st;
      terms2 += std::pow(dx[i] * st, 2);
      double e = unit_roundoff(fmt()) * (std::abs(double(dx[i])) + smallest_normal(fmt())) +
                 unit_roundoff(f32) * (std::sqrt(terms[i] + 1) + 2) * abs_sum[i];
      var += std::pow(st * e, 2);
    }
    double tol = 10 * (noise + std::sqrt(var));
    ASSERT_LT(tol, 0.1 * std::sqrt(terms2)) << "tolerance too loose to detect a wrong gradient";
    EXPECT_NEAR(fd, dot, tol) << "L(x + hv) - L(x - hv) against <dx, step>";
  }

  // Values k/32, |k| <= 128, that differ from every value already placed
  // within window - 1 rows and columns (two inputs of one window are that
  // close), so every window's values are distinct, at least 1/32 apart.
  std::vector<float> distinct_in_windows(const ops::Pool2d& p) {
    std::vector<float> x(p.input_elements());
    const int64_t r = int64_t(p.window) - 1;
    std::uniform_int_distribution<int> k(-128, 128);
    auto at = [&](uint32_t n, int64_t y, int64_t xx, uint32_t c) {
      return ((size_t(n) * p.in_h + size_t(y)) * p.in_w + size_t(xx)) * p.channels + c;
    };
    for (uint32_t n = 0; n < p.batch; ++n)
      for (uint32_t c = 0; c < p.channels; ++c)
        for (int64_t y = 0; y < p.in_h; ++y)
          for (int64_t xx = 0; xx < p.in_w; ++xx) {
            for (;;) {
              float v = float(k(rng())) / 32;
              bool clash = false;
              for (int64_t yy = std::max<int64_t>(0, y - r); yy <= y && !clash; ++yy)
                for (int64_t x2 = std::max<int64_t>(0, xx - r); x2 <= std::min<int64_t>(p.in_w - 1, xx + r); ++x2) {
                  if (yy == y && x2 >= xx) break;  // not placed yet
                  if (x[at(n, yy, x2, c)] == v) {
                    clash = true;
                    break;
                  }
                }
              if (!clash) {
                x[at(n, y, xx, c)] = v;
                break;
              }
            }
          }
    return x;
  }
};

TEST_P(PoolGrad, MaxBackwardMatchesFiniteDifferences) { expect_matches_central_differences(PoolKind::Max); }
TEST_P(PoolGrad, AvgBackwardMatchesFiniteDifferences) { expect_matches_central_differences(PoolKind::Average); }

std::string format_pool_name(const ::testing::TestParamInfo<FormatPool>& info) {
  return std::string(format_name(std::get<0>(info.param))) + "_" + shape_name(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Shaders, Pool,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::ValuesIn(kShapes)),
                         format_pool_name);
INSTANTIATE_TEST_SUITE_P(Shaders, PoolGrad,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::ValuesIn(kShapes)),
                         format_pool_name);

// The shapes whose windows do not overlap: the only ones the per-window
// backward takes.
std::vector<PoolShape> non_overlapping_shapes() {
  std::vector<PoolShape> v;
  for (const PoolShape& s : kShapes)
    if (s.stride >= s.window) v.push_back(s);
  return v;
}
INSTANTIATE_TEST_SUITE_P(Shaders, PoolWindows,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats),
                                            ::testing::ValuesIn(non_overlapping_shapes())),
                         format_pool_name);

class PoolShapes : public GpuTest {};

TEST_F(PoolShapes, RejectsBadShapesAndShortBuffers) {
  ops::Pool2d ok = pool_of({1, 6, 5, 3, 2, 2}, PoolKind::Max);
  EXPECT_NO_THROW(ops::validate(ok));
  auto bad = [&](auto change, const char* why) {
    ops::Pool2d p = ok;
    change(p);
    EXPECT_THROW(ops::validate(p), Error) << why;
  };
  bad([](ops::Pool2d& p) { p.batch = 0; }, "batch 0");
  bad([](ops::Pool2d& p) { p.channels = 0; }, "no channels");
  bad([](ops::Pool2d& p) { p.window = 0; }, "window 0");
  bad([](ops::Pool2d& p) { p.stride = 0; }, "stride 0");
  bad([](ops::Pool2d& p) { p.window = 6; }, "window 6 wider than 5");
  bad([](ops::Pool2d& p) { p.kind = PoolKind(7); }, "unknown kind");

  Format f = Format::BF16;
  Buffer x(ctx(), ok.input_elements() * 2), y(ctx(), ok.output_elements() * 2);
  Buffer short_y(ctx(), ok.output_elements() * 2 - 2), short_x(ctx(), ok.input_elements() * 2 - 2);
  Sequence seq(ctx());
  seq.begin();
  EXPECT_THROW(ops::pool2d_forward(seq, f, ok, x, short_y), Error);
  EXPECT_THROW(ops::pool2d_forward(seq, f, ok, short_x, y), Error);
  EXPECT_THROW(ops::pool2d_backward(seq, f, ok, x, y, short_x), Error);
  EXPECT_THROW(ops::pool2d_backward(seq, f, ok, short_x, y, x), Error) << "max pooling reads x";
  seq.end();
}

}  // namespace
}  // namespace vkamp::test
