// gemm's backward products checked by finite differences through the GPU
// forward (fp32, every shape of gemm_shapes.hpp): the gradient a linear
// layer trains on is the derivative of what its forward computes.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "shaders/gemm_shapes.hpp"
#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "vkamp/ops/gemm.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

// Finite differences of L = sum(G .* Y), Y = X W^T, through the GPU forward
// in fp32: (L(X+hV) - L(X-hV)) / 2h against <dX, V> with dX = G W from
// linear_backward_input, and the same along W with dW = G^T X from
// linear_backward_weight. m,n,k = batch,out,in.
class GemmGrad : public GpuTestP<Shape> {};

// sqrt(sum of squares), of a double vector.
double norm2(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

TEST_P(GemmGrad, BackwardMatchesFiniteDifferences) {
  const Format f = Format::F32;
  const Shape s = GetParam();
  const uint32_t batch = s.m, out = s.n, in = s.k;
  const double u = unit_roundoff(f);
  // L is linear in X and in W, so the central difference has no truncation
  // error at any h: only fp32 rounding in the forward, which a large step
  // divides away. h = 0.5 moves the inputs by as much as they hold.
  const float h = 0.5f;
  auto x = random_values(size_t(batch) * in, -1, 1, f);
  auto w = random_values(size_t(out) * in, -1, 1, f);
  auto g = random_values(size_t(batch) * out, -1, 1, f);
  // Directions with |entries| in [0.5, 1): no direction is nearly zero.
  auto direction = [&](size_t n) {
    auto v = random_values(n, 0.5f, 1.0f, f);
    for (float& e : v)
      if (std::bernoulli_distribution(0.5)(rng())) e = -e;
    return v;
  };
  auto vx = direction(x.size()), vw = direction(w.size());
  auto step = [&](const std::vector<float>& p, const std::vector<float>& v, float sign) {
    std::vector<float> r(p.size());
    for (size_t i = 0; i < p.size(); ++i) r[i] = p[i] + sign * h * v[i];
    return r;
  };
  auto xp = step(x, vx, 1), xm = step(x, vx, -1), wp = step(w, vw, 1), wm = step(w, vw, -1);

  Buffer bx = guarded_input(f, x), bw = guarded_input(f, w), bg = guarded_input(f, g);
  Buffer bxp = guarded_input(f, xp), bxm = guarded_input(f, xm), bwp = guarded_input(f, wp), bwm = guarded_input(f, wm);
  const size_t ny = size_t(batch) * out;
  Buffer yxp = guarded_output(f, ny), yxm = guarded_output(f, ny), ywp = guarded_output(f, ny), ywm = guarded_output(f, ny);
  Buffer bdx = guarded_output(f, x.size()), bdw = guarded_output(f, w.size());
  run_once([&](Sequence& seq) {
    ops::linear_forward(seq, f, bxp, bw, yxp, batch, in, out);
    ops::linear_forward(seq, f, bxm, bw, yxm, batch, in, out);
    ops::linear_forward(seq, f, bx, bwp, ywp, batch, in, out);
    ops::linear_forward(seq, f, bx, bwm, ywm, batch, in, out);
    ops::linear_backward_input(seq, f, bg, bw, bdx, batch, in, out);
    ops::linear_backward_weight(seq, f, bg, bx, bdw, batch, in, out);
  });
  auto dx = guarded_result(bdx, f, x.size()), dw = guarded_result(bdw, f, w.size());

  // L and its rounding noise scale: an fp32 dot product of length k has
  // error about u sqrt(k+1) sum|a||b| (independent roundings, the +1 for a
  // product rounded before the add), and independent output errors add in
  // quadrature through the sum over G.
  auto loss = [&](const Buffer& y, const std::vector<float>& xs, const std::vector<float>& ws, double* noise) {
    auto yv = guarded_result(y, f, ny);
    double l = 0, var = 0;
    for (uint32_t b = 0; b < batch; ++b)
      for (uint32_t o = 0; o < out; ++o) {
        double abs_sum = 0;
        for (uint32_t i = 0; i < in; ++i) abs_sum += std::abs(double(xs[b * in + i]) * ws[o * in + i]);
        double gi = g[b * out + o];
        l += gi * yv[b * out + o];
        var += std::pow(gi * u * std::sqrt(in + 1.0) * abs_sum, 2);
      }
    *noise += std::sqrt(var);
    return l;
  };

  // Along X. The step the host actually took is xp - xm (exact in double),
  // so compare L(xp) - L(xm) with <dX, xp - xm>; dividing by 2h gives the
  // usual central difference.
  {
    double noise = 0;
    double diff = (loss(yxp, xp, w, &noise) - loss(yxm, xm, w, &noise)) / (2 * h);
    noise /= 2 * h;
    double dot = 0, dx_noise = 0;
    std::vector<double> terms(x.size());
    for (uint32_t b = 0; b < batch; ++b)
      for (uint32_t i = 0; i < in; ++i) {
        size_t e = size_t(b) * in + i;
        double d = (double(xp[e]) - xm[e]) / (2 * h);
        terms[e] = dx[e] * d;
        dot += terms[e];
        double abs_sum = 0;
        for (uint32_t o = 0; o < out; ++o) abs_sum += std::abs(double(g[b * out + o]) * w[o * in + i]);
        dx_noise += std::pow(d * u * std::sqrt(out + 1.0) * abs_sum, 2);
      }
    // 10 standard deviations of the rounding noise: a false alarm is out of the question.
    double tol = 10 * (noise + std::sqrt(dx_noise));
    // A wrong gradient moves <dX, V> by about ||dX .* V||: the check must be
    // far finer than that to be able to fail.
    ASSERT_LT(tol, 0.01 * norm2(terms)) << "tolerance too loose to detect a wrong dX";
    EXPECT_NEAR(diff, dot, tol) << "central difference along X vs <dX, V>";
  }
  // Along W.
  {
    double noise = 0;
    double diff = (loss(ywp, x, wp, &noise) - loss(ywm, x, wm, &noise)) / (2 * h);
    noise /= 2 * h;
    double dot = 0, dw_noise = 0;
    std::vector<double> terms(w.size());
    for (uint32_t o = 0; o < out; ++o)
      for (uint32_t i = 0; i < in; ++i) {
        size_t e = size_t(o) * in + i;
        double d = (double(wp[e]) - wm[e]) / (2 * h);
        terms[e] = dw[e] * d;
        dot += terms[e];
        double abs_sum = 0;
        for (uint32_t b = 0; b < batch; ++b) abs_sum += std::abs(double(g[b * out + o]) * x[b * in + i]);
        dw_noise += std::pow(d * u * std::sqrt(batch + 1.0) * abs_sum, 2);
      }
    double tol = 10 * (noise + std::sqrt(dw_noise));
    ASSERT_LT(tol, 0.01 * norm2(terms)) << "tolerance too loose to detect a wrong dW";
    EXPECT_NEAR(diff, dot, tol) << "central difference along W vs <dW, U>";
  }
}

INSTANTIATE_TEST_SUITE_P(Shaders, GemmGrad, ::testing::ValuesIn(kShapes),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           return "fp32_" + shape_name(info.param);
                         });

}  // namespace
}  // namespace vkamp::test
