// Causal self-attention (ops/attention.hpp) against a double reference
// written from nanoGPT's definition, in every format at awkward shapes:
// seq 1 (each position sees only itself: y = v), 7, 33, 67 and 130 (rows
// longer than the 128 invocations of the softmax workgroups, and several
// tiles of the fused path's queries and keys); heads 1, 2, 3; head sizes 1,
// 4, 5, 16, 64; batch 1, 2 and 3. Every path (VKAMP_ATTENTION: the device's
// default, the others in tests/CMakeLists.txt's variants), the fused ones
// at both tile defaults (VKAMP_ATTENTION_TILES). Outputs are guarded and poisoned, and so
// are kept and workspace, so a read of anything the op did not write shows
// up as NaN. Also: the causal mask (later positions cannot change earlier
// outputs), a NaN in q, k or v reaching exactly the outputs that depend on
// it, forward and backward, accumulation into dqkv, and the backward
// against Richardson-extrapolated central differences of the GPU forward.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/error.hpp"
#include "vkamp/knobs.hpp"
#include "vkamp/ops/attention.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

using ops::AttentionShape;

constexpr AttentionShape kShapes[] = {
    {.batch = 1, .seq = 1, .channels = 1, .heads = 1},   {.batch = 3, .seq = 7, .channels = 10, .heads = 2},
    {.batch = 1, .seq = 33, .channels = 48, .heads = 3}, {.batch = 3, .seq = 33, .channels = 3, .heads = 3},
    {.batch = 3, .seq = 1, .channels = 16, .heads = 1},  {.batch = 1, .seq = 130, .channels = 8, .heads = 2},
    {.batch = 2, .seq = 67, .channels = 128, .heads = 2}};

// The shapes with positions after the first, where causality can be seen.
constexpr AttentionShape kCausalShapes[] = {kShapes[1], kShapes[2], kShapes[3], kShapes[5], kShapes[6]};

using FormatShape = std::tuple<Format, AttentionShape>;

std::string shape_name(const AttentionShape& s) {
  return "b" + std::to_string(s.batch) + "_t" + std::to_string(s.seq) + "_c" + std::to_string(s.channels) + "_h" +
         std::to_string(s.heads);
}

// The reference and, per output element, the two error magnitudes of
// ErrorBudget (guarded.hpp): the rounding errors to the format on the way
// to it, and the fp32 errors, each in units of that format's unit roundoff.
struct Reference {
  std::vector<double> y, dqkv;
  std::vector<double> y_fmt, y_f32, d_fmt, d_f32;
};

// From the definition, in double. Index helpers follow the layouts of
// attention.hpp: qkv[b, t, part * C + h * hd + e], y and dy [b, t, h * hd + e].
//
// The error model adds independent roundings in quadrature (root sum of
// squares, as random rounding errors add; nmse_bound's 16x margin covers
// the rest), where test_gemm.cpp's bounds add the error of one sum:
//  - S = alpha q.k: fp32 dot product (sqrt(hd + 1) alpha sum|q k|), then
//    rounded to the format (|S|).
//  - P_j = softmax: its own rounding (|P|); S_j's error, and through the
//    normalisation sum_j P_j dS_j (P |S_j|, P sum P|S|); in fp32 also exp
//    (3 + 2 |x| ulps, the Vulkan precision) and the row sum (sqrt(t + 2)).
//  - Each GEMM's fp32 sum of n terms: sqrt(n + 2) times their root sum of
//    squares (a random walk over partial sums of that size); each output
//    rounded once to the format.
//  - dP = dy.v (rounded), D = sum P dP (fp32), dS = P (dP - D) (rounded).
Reference reference(Format fmt, const std::vector<float>& qkv, const std::vector<float>& dy,
                    const AttentionShape& s) {
  const uint32_t T = s.seq, C = s.channels, H = s.heads, hd = C / H;
  const double alpha = 1.0 / std::sqrt(double(hd)), sn = smallest_normal(fmt), gemm = T + 2.0;
  auto at = [&](uint32_t b, uint32_t t, uint32_t part, uint32_t h, uint32_t e) {
    return (size_t(b) * T + t) * 3 * C + part * C + h * hd + e;
  };
  auto yat = [&](uint32_t b, uint32_t t, uint32_t h, uint32_t e) { return (size_t(b) * T + t) * C + h * hd + e; };
  auto sq = [](double x) { return x * x; };
  Reference r;
  r.y.assign(size_t(s.batch) * T * C, 0.0);
  r.y_fmt = r.y_f32 = r.y;  // squared until the end
  r.dqkv.assign(qkv.size(), 0.0);
  r.d_fmt = r.d_f32 = r.dqkv;
  std::vector<double> sc(T), sc32(T), p(T), pf(T), p32(T), dp(T), dp32(T), ds(T), dsf(T), ds32(T);
  for (uint32_t b = 0; b < s.batch; ++b)
    for (uint32_t h = 0; h < H; ++h)
      for (uint32_t t = 0; t < T; ++t) {
        // Scores and softmax over j <= t.
        double m = -INFINITY;
        for (uint32_t j = 0; j <= t; ++j) {
          double d = 0, da = 0;
          for (uint32_t e = 0; e < hd; ++e) {
            d += double(qkv[at(b, t, 0, h, e)]) * qkv[at(b, j, 1, h, e)];
            da += std::abs(double(qkv[at(b, t, 0, h, e)]) * qkv[at(b, j, 1, h, e)]);
          }
          sc[j] = alpha * d;
          sc32[j] = std::sqrt(hd + 1.0) * alpha * da;
          m = std::max(m, sc[j]);
        }
        double sum = 0, psf = 0, ps32 = 0;
        for (uint32_t j = 0; j <= t; ++j) sum += std::exp(sc[j] - m);
        for (uint32_t j = 0; j <= t; ++j) {
          p[j] = std::exp(sc[j] - m) / sum;
          psf += p[j] * std::abs(sc[j]);
          ps32 += p[j] * sc32[j];
        }
        // P's errors: pf in the format's units, p32 in fp32's.
        for (uint32_t j = 0; j <= t; ++j) {
          pf[j] = std::hypot(p[j] + sn, p[j] * std::hypot(sc[j], psf));
          p32[j] = p[j] * std::hypot(std::hypot(sc32[j], ps32), 3 + 2 * (m - sc[j]) + std::sqrt(t + 2.0));
        }
        // Forward: y = sum_j p_j v_j.
        for (uint32_t e = 0; e < hd; ++e) {
          size_t i = yat(b, t, h, e);
          for (uint32_t j = 0; j <= t; ++j) {
            double vj = qkv[at(b, j, 2, h, e)];
            r.y[i] += p[j] * vj;
            r.y_fmt[i] += sq(pf[j] * vj);
            r.y_f32[i] += sq(p32[j] * vj) + gemm * sq(p[j] * vj);
          }
        }
        // Backward: dP, D = sum P dP, dS, then dq, dk, dv. The fused path
        // takes D = dy . y from the stored y: y's rounding to the format
        // (|y| each, the forward's terms above) weighed by dy, and an fp32
        // dot product of hd terms.
        double dd = 0, ddf = 0, dd32 = 0;
        for (uint32_t e = 0; e < hd; ++e) {
          const double gy = double(dy[yat(b, t, h, e)]) * r.y[yat(b, t, h, e)];
          ddf += sq(std::abs(gy) + std::abs(dy[yat(b, t, h, e)]) * sn) + sq(dy[yat(b, t, h, e)]) * r.y_fmt[yat(b, t, h, e)];
          dd32 += (hd + 2.0) * sq(gy) + sq(dy[yat(b, t, h, e)]) * r.y_f32[yat(b, t, h, e)];
        }
        for (uint32_t j = 0; j <= t; ++j) {
          double d = 0, d2 = 0;
          for (uint32_t e = 0; e < hd; ++e) {
            double term = double(dy[yat(b, t, h, e)]) * qkv[at(b, j, 2, h, e)];
            d += term;
            d2 += term * term;
          }
          dp[j] = d;
          dp32[j] = std::sqrt((hd + 2.0) * d2);
          dd += p[j] * d;
          ddf += sq(p[j] * d) + sq(pf[j] * d);
          dd32 += sq(p[j] * dp32[j]) + sq(p32[j] * d) + (t + 2.0) * sq(p[j] * d);
        }
        for (uint32_t j = 0; j <= t; ++j) {
          ds[j] = p[j] * (dp[j] - dd);
          dsf[j] = std::sqrt(sq(std::abs(ds[j]) + sn) + sq(pf[j] * (dp[j] - dd)) + sq(p[j]) * (sq(dp[j]) + ddf));
          ds32[j] = std::sqrt(sq(p32[j] * (dp[j] - dd)) + sq(p[j]) * (sq(dp32[j]) + dd32));
        }
        for (uint32_t e = 0; e < hd; ++e) {
          const double g = dy[yat(b, t, h, e)];
          size_t iq = at(b, t, 0, h, e);
          const double qt = qkv[iq];
          for (uint32_t j = 0; j <= t; ++j) {
            size_t ik = at(b, j, 1, h, e), iv = at(b, j, 2, h, e);
            const double kj = qkv[ik];
            r.dqkv[iq] += alpha * ds[j] * kj;
            r.d_fmt[iq] += sq(alpha * dsf[j] * kj);
            r.d_f32[iq] += sq(alpha * ds32[j] * kj) + gemm * sq(alpha * ds[j] * kj);
            r.dqkv[ik] += alpha * ds[j] * qt;
            r.d_fmt[ik] += sq(alpha * dsf[j] * qt);
            r.d_f32[ik] += sq(alpha * ds32[j] * qt) + gemm * sq(alpha * ds[j] * qt);
            r.dqkv[iv] += p[j] * g;
            r.d_fmt[iv] += sq(pf[j] * g);
            r.d_f32[iv] += sq(p32[j] * g) + gemm * sq(p[j] * g);
          }
        }
      }
  // Every output is rounded once more to the format, after its last sum.
  for (size_t i = 0; i < r.y.size(); ++i) {
    r.y_fmt[i] = std::sqrt(r.y_fmt[i] + sq(std::abs(r.y[i]) + sn));
    r.y_f32[i] = std::sqrt(r.y_f32[i]);
  }
  for (size_t i = 0; i < r.dqkv.size(); ++i) {
    r.d_fmt[i] = std::sqrt(r.d_fmt[i] + sq(std::abs(r.dqkv[i]) + sn));
    r.d_f32[i] = std::sqrt(r.d_f32[i]);
  }
  return r;
}

double bound(Format fmt, const std::vector<double>& ref, const std::vector<double>& fmt_mag,
             const std::vector<double>& f32_mag) {
  ErrorBudget budget(fmt);
  for (size_t i = 0; i < ref.size(); ++i) budget.add(ref[i], fmt_mag[i], f32_mag[i]);
  return budget.bound();
}

struct Result {
  std::vector<float> y, dqkv;
};

// Forward and backward in one recording; kept and workspace poisoned.
// `dqkv0` makes the backward accumulate into it.
Result run(Format f, const AttentionShape& s, const std::vector<float>& qkv, const std::vector<float>& dy,
           const std::vector<float>* dqkv0 = nullptr, bool backward = true) {
  const size_t ny = size_t(s.batch) * s.seq * s.channels;
  Buffer bqkv = guarded_input(f, qkv), bdy = guarded_input(f, dy);
  Buffer by = guarded_output(f, ny), bd = guarded_output(f, 3 * ny, dqkv0);
  Buffer kept = poisoned(ctx(), f, s.batch * ops::attention_kept_elements(ctx(), f, s.seq, s.channels, s.heads));
  Buffer work = poisoned(ctx(), f, s.batch * ops::attention_workspace_elements(ctx(), f, s.seq, s.channels, s.heads));
  run_once([&](Sequence& seq) {
    ops::attention_forward(seq, f, bqkv, by, kept, s);
    if (backward) ops::attention_backward(seq, f, bqkv, by, kept, bdy, bd, work, s, dqkv0 != nullptr);
  });
  Result r{guarded_result(by, f, ny, "y"), {}};
  if (backward) r.dqkv = guarded_result(bd, f, 3 * ny, "dqkv");
  return r;
}

class Attention : public GpuTestP<FormatShape> {
 protected:
  Format fmt() const { return std::get<0>(GetParam()); }
  const AttentionShape& shape() const { return std::get<1>(GetParam()); }
  size_t tokens() const { return size_t(shape().batch) * shape().seq * shape().channels; }
  std::vector<float> random_qkv() { return random_values(3 * tokens(), -1, 1, fmt()); }
  std::vector<float> random_dy() { return random_values(tokens(), -1, 1, fmt()); }
};

TEST_P(Attention, ForwardAndBackward) {
  auto qkv = random_qkv(), dy = random_dy();
  Result out = run(fmt(), shape(), qkv, dy);
  Reference ref = reference(fmt(), qkv, dy, shape());
  EXPECT_TRUE(close_to(out.y, ref.y, bound(fmt(), ref.y, ref.y_fmt, ref.y_f32))) << "y";
  EXPECT_TRUE(close_to(out.dqkv, ref.dqkv, bound(fmt(), ref.dqkv, ref.d_fmt, ref.d_f32))) << "dqkv";
}

// Fixed-order sums, no atomics, on either row path (VKAMP_ROW_KERNEL).
TEST_P(Attention, SameBitsEveryRun) {
  auto qkv = random_qkv(), dy = random_dy();
  Result a = run(fmt(), shape(), qkv, dy), b = run(fmt(), shape(), qkv, dy);
  EXPECT_EQ(0, std::memcmp(a.y.data(), b.y.data(), a.y.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(a.dqkv.data(), b.dqkv.data(), a.dqkv.size() * sizeof(float)));
}

TEST_P(Attention, BackwardAccumulates) {
  auto qkv = random_qkv(), dy = random_dy();
  auto old = random_values(3 * tokens(), -1, 1, fmt());
  Result out = run(fmt(), shape(), qkv, dy, &old);
  Reference ref = reference(fmt(), qkv, dy, shape());
  // One more fp32 add, then one more rounding to the format, of the total.
  for (size_t i = 0; i < old.size(); ++i) {
    ref.dqkv[i] += old[i];
    ref.d_fmt[i] = std::hypot(ref.d_fmt[i], std::abs(ref.dqkv[i]) + smallest_normal(fmt()));
  }
  EXPECT_TRUE(close_to(out.dqkv, ref.dqkv, bound(fmt(), ref.dqkv, ref.d_fmt, ref.d_f32)));
}

// Decoding with a KV cache (last_only): y holds only the last position of
// each example, against the same reference and bounds as the full forward's
// rows there (the same sums, with one query row), a NaN included.
TEST_P(Attention, LastOnlyGivesTheLastPosition) {
  const AttentionShape& s = shape();
  AttentionShape last = s;
  last.last_only = true;
  auto qkv = random_qkv(), dy = random_dy();
  qkv[s.channels + 1 % s.channels] = kNan;  // k of position 0 of example 0: its head of y is NaN
  const size_t ny = size_t(s.batch) * s.channels;
  Buffer bqkv = guarded_input(fmt(), qkv), by = guarded_output(fmt(), ny);
  Buffer kept = poisoned(ctx(), fmt(), s.batch * ops::attention_kept_elements(ctx(), fmt(), s.seq, s.channels, s.heads));
  run_once([&](Sequence& seq) { ops::attention_forward(seq, fmt(), bqkv, by, kept, last); });
  const std::vector<float> y = guarded_result(by, fmt(), ny, "y");
  Reference ref = reference(fmt(), qkv, dy, s);
  std::vector<double> want, want_fmt, want_f32;
  for (uint32_t b = 0; b < s.batch; ++b)
    for (uint32_t c = 0; c < s.channels; ++c) {
      const size_t i = (size_t(b) * s.seq + s.seq - 1) * s.channels + c;
      want.push_back(ref.y[i]);
      want_fmt.push_back(ref.y_fmt[i]);
      want_f32.push_back(ref.y_f32[i]);
    }
  EXPECT_TRUE(close_to(y, want, bound(fmt(), want, want_fmt, want_f32)));
}

// The mask: q, k and v of positions after t0 redrawn leave y at positions
// up to t0 bit for bit the same (the sums skip them rather than weigh them 0).
// Over the shapes with more than one position (kCausalShapes).
class AttentionCausality : public Attention {};

TEST_P(AttentionCausality, LaterPositionsDoNotChangeEarlierOutputs) {
  const AttentionShape& s = shape();
  const uint32_t t0 = std::uniform_int_distribution<uint32_t>(0, s.seq - 2)(rng());
  auto qkv = random_qkv(), later = qkv, fresh = random_qkv();
  for (uint32_t b = 0; b < s.batch; ++b)
    for (uint32_t t = t0 + 1; t < s.seq; ++t)
      for (uint32_t c = 0; c < 3 * s.channels; ++c) {
        size_t i = (size_t(b) * s.seq + t) * 3 * s.channels + c;
        later[i] = fresh[i];
      }
  auto dy = random_dy();
  std::vector<float> y1 = run(fmt(), s, qkv, dy, nullptr, false).y, y2 = run(fmt(), s, later, dy, nullptr, false).y;
  for (uint32_t b = 0; b < s.batch; ++b)
    for (uint32_t t = 0; t <= t0; ++t)
      for (uint32_t c = 0; c < s.channels; ++c) {
        size_t i = (size_t(b) * s.seq + t) * s.channels + c;
        ASSERT_EQ(y1[i], y2[i]) << "example " << b << ", position " << t << " <= " << t0 << ", channel " << c;
      }
}

// A NaN in one element of q, k or v must reach exactly the outputs whose
// definition uses it: q_t's row of scores (y at t, whole head), k_j's
// column (every query t >= j), v_j (y at t >= j, its channel). Positions
// before it stay finite (the masked products are skipped, not weighed 0,
// and 0 * NaN would be NaN). The backward carries it on (dk of every key
// a NaN row saw, for instance) rather than hiding it; close_to wants NaN
// exactly where the double reference has it, finite values elsewhere.
TEST_P(Attention, NanReachesOnlyWhatDependsOnIt) {
  const AttentionShape& s = shape();
  const uint32_t hd = s.channels / s.heads;
  for (uint32_t part : {0u, 1u, 2u}) {
    SCOPED_TRACE(::testing::Message() << "NaN in " << "qkv"[part]);
    auto qkv = random_qkv(), dy = random_dy();
    auto pick = [&](uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng()); };
    const uint32_t b = pick(s.batch), t = pick(s.seq), c = pick(s.channels);
    qkv[(size_t(b) * s.seq + t) * 3 * s.channels + part * s.channels + c] = kNan;
    Result out = run(fmt(), s, qkv, dy);
    Reference ref = reference(fmt(), qkv, dy, s);
    // The case must have NaN outputs, and (past position 0) finite ones before them.
    size_t ybase = (size_t(b) * s.seq + t) * s.channels;
    ASSERT_TRUE(std::isnan(ref.y[ybase + (part == 2 ? c : c / hd * hd)]));
    if (t > 0) {
      ASSERT_FALSE(std::isnan(ref.y[ybase - s.channels + c])) << "the position before";
    }
    bool dnan = false;
    for (double d : ref.dqkv) dnan |= std::isnan(d);
    ASSERT_TRUE(dnan) << "the NaN reaches the backward through dP or P";
    EXPECT_TRUE(close_to(out.y, ref.y, bound(fmt(), ref.y, ref.y_fmt, ref.y_f32))) << "y";
    EXPECT_TRUE(close_to(out.dqkv, ref.dqkv, bound(fmt(), ref.dqkv, ref.d_fmt, ref.d_f32))) << "dqkv";
  }
}

// An inf in k_j: its score is +-inf in every row t >= j of its head, and
// the fused path makes those rows' outputs NaN (the loss scaler must see an
// overflow, though a -inf score would weigh k_j 0 in exact arithmetic),
// while the rows before j stay finite and the backward carries the NaN on.
// The materialized path gives NaN for +inf scores only (exp(inf - inf)), so
// this is the fused path's rule.
TEST_P(AttentionCausality, InfInAKeyPoisonsTheRowsThatSeeIt) {
  const AttentionShape& s = shape();
  if (!ops::attention_fused(ctx(), s.channels, s.heads)) GTEST_SKIP() << "the fused path's rule (VKAMP_ATTENTION)";
  const uint32_t hd = s.channels / s.heads, j = std::uniform_int_distribution<uint32_t>(1, s.seq - 1)(rng());
  const uint32_t c = std::uniform_int_distribution<uint32_t>(0, s.channels - 1)(rng()), h = c / hd;
  for (float inf : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()}) {
    SCOPED_TRACE(::testing::Message() << inf << " in k of position " << j << ", channel " << c);
    auto qkv = random_qkv(), dy = random_dy();
    qkv[size_t(j) * 3 * s.channels + s.channels + c] = inf;  // example 0
    Result out = run(fmt(), s, qkv, dy);
    for (uint32_t t = 0; t < s.seq; ++t)
      for (uint32_t e = 0; e < s.channels; ++e) {
        const float v = out.y[size_t(t) * s.channels + e];
        if (t >= j && e / hd == h) ASSERT_TRUE(std::isnan(v)) << "y at " << t << ", " << e;
        else ASSERT_TRUE(std::isfinite(v)) << "y at " << t << ", " << e;
      }
    // dq of row j itself and dv of key 0 (which row j weighs) are NaN.
    EXPECT_TRUE(std::isnan(out.dqkv[size_t(j) * 3 * s.channels + h * hd]));
    EXPECT_TRUE(std::isnan(out.dqkv[2 * s.channels + h * hd]));
  }
}

std::string format_shape_name(const ::testing::TestParamInfo<FormatShape>& info) {
  return std::string(format_name(std::get<0>(info.param))) + "_" + shape_name(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Shaders, Attention,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::ValuesIn(kShapes)),
                         format_shape_name);
INSTANTIATE_TEST_SUITE_P(Shaders, AttentionCausality,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::ValuesIn(kCausalShapes)),
                         format_shape_name);

// L(qkv) = sum(G .* y(qkv)) in fp32 along a random direction V: the
// Richardson extrapolation (4 D(h/2) - D(h)) / 3 of the central differences
// D(h) = (L(qkv + hV) - L(qkv - hV)) / 2h (truncation O(h^4)) against
// <dqkv, V> from the backward with dy = G.
class AttentionGrad : public GpuTestP<AttentionShape> {};

TEST_P(AttentionGrad, BackwardMatchesFiniteDifferences) {
  const Format f = Format::F32;
  const AttentionShape& s = GetParam();
  const size_t ny = size_t(s.batch) * s.seq * s.channels, n = 3 * ny;
  // qkv on a grid of 2^-20 and V of 2^-8, steps h of 2^-6 and 2^-7: every
  // qkv + h V is exact in fp32, so the steps taken are exactly h V.
  auto on_grid = [](std::vector<float> x, float grid) {
    for (float& e : x) e = std::round(e / grid) * grid;
    return x;
  };
  auto qkv = on_grid(random_values(n, -1, 1, f), 0x1p-20f), v = on_grid(random_values(n, -1, 1, f), 0x1p-8f);
  auto g = random_values(ny, -1, 1, f);
  auto loss = [&](double h) {
    std::vector<float> at(n);
    for (size_t i = 0; i < n; ++i) at[i] = float(qkv[i] + h * v[i]);
    std::vector<float> y = run(f, s, at, g, nullptr, false).y;
    double l = 0;
    for (size_t i = 0; i < ny; ++i) l += double(g[i]) * y[i];
    return l;
  };
  const double h = 0x1p-6;
  auto central = [&](double step) { return (loss(step) - loss(-step)) / (2 * step); };
  const double fd = (4 * central(h / 2) - central(h)) / 3;
  std::vector<float> d = run(f, s, qkv, g).dqkv;
  double dot = 0, d_norm = 0, v_norm = 0;
  for (size_t i = 0; i < n; ++i) {
    dot += double(d[i]) * v[i];
    d_norm += double(d[i]) * d[i];
    v_norm += double(v[i]) * v[i];
  }
  // Relative to |dqkv| |V| (as LayerNorm's check). Truncation: (h / 0.58)^4
  // = 8e-7 times the attention's fourth derivatives, of order 1 for scores
  // of order 1; rounding: the forward's fp32 errors, ~1e-7 of each y with
  // random signs through L, divided by the steps. Measured: at most 5e-7
  // over these shapes (0 at seq 1, where L is linear in v). 5e-6 leaves a
  // margin of 10 and catches dk off by 0.2% (dk off by 3% measured 1e-4).
  const double err = std::abs(dot - fd) / std::sqrt(d_norm * v_norm);
  EXPECT_LE(err, 5e-6) << "<dqkv, V> " << dot << ", extrapolated central difference " << fd;
}

// Which path runs (ops/attention.hpp): the device's row of
// attention_defaults.txt unless the context's KernelPaths names one (the
// environment's spelling is checked in test_knobs), and the materialized
// one past the fused kernels' head size; what the forward keeps follows
// the path.
class AttentionPath : public GpuTest {};

// ctx() on attention path `p` while the result lives.
UsePaths attention_on(vkamp::AttentionPath p, std::optional<std::string> tiles = {}) {
  KernelPaths paths;
  paths.attention = p;
  paths.attention_tiles = std::move(tiles);
  return UsePaths(paths);
}

TEST_F(AttentionPath, IsTheDevicesUnlessSet) {
  const uint32_t seq = 40, channels = 64, heads = 4;
  bool by_default = false;
  {
    ScopedEnv e("VKAMP_ATTENTION", nullptr);  // a context with the field unset everywhere
    ContextOptions opt;
    opt.device = std::to_string(ctx().info().index);
    opt.validation = ctx().validation();  // the test main's: off under VKAMP_TEST_VALIDATION=0
    Context plain(opt);
    by_default = ops::attention_fused(plain, channels, heads);
  }
  if (ctx().info().type == VK_PHYSICAL_DEVICE_TYPE_CPU) {
    EXPECT_FALSE(by_default) << "CPU drivers: materialized";
  }
  {
    UsePaths use = attention_on(vkamp::AttentionPath::fused);
    EXPECT_TRUE(ops::attention_fused(ctx(), channels, heads));
    EXPECT_FALSE(ops::attention_fused(ctx(), 2 * 129, 2)) << "a head of 129";
    EXPECT_EQ(ops::attention_kept_elements(ctx(), Format::F16, seq, channels, heads), uint64_t(heads) * seq * 2)
        << "an fp32 logsumexp per head and position, in fp16 elements";
  }
  {
    UsePaths use = attention_on(vkamp::AttentionPath::materialized);
    EXPECT_FALSE(ops::attention_fused(ctx(), channels, heads));
    EXPECT_EQ(ops::attention_kept_elements(ctx(), Format::F16, seq, channels, heads), uint64_t(heads) * seq * seq);
  }
  UsePaths use = attention_on(vkamp::AttentionPath::mma);
  EXPECT_TRUE(ops::attention_fused(ctx(), channels, heads)) << "the fused path on fragments";
}

// Forward and backward in fp16 at each of `tiles` (VKAMP_ATTENTION_TILES)
// against the reference, on fresh inputs.
void expect_reference_at_tiles(const AttentionShape& s, std::initializer_list<const char*> tiles) {
  const Format f = Format::F16;
  const size_t tokens = size_t(s.batch) * s.seq * s.channels;
  for (const char* t : tiles) {
    SCOPED_TRACE(t);
    KernelPaths paths;
    paths.attention_tiles = t;
    UsePaths use(paths);
    auto qkv = random_values(3 * tokens, -1, 1, f), dy = random_values(tokens, -1, 1, f);
    Result out = run(f, s, qkv, dy);
    Reference ref = reference(f, qkv, dy, s);
    EXPECT_TRUE(close_to(out.y, ref.y, bound(f, ref.y, ref.y_fmt, ref.y_f32))) << "y";
    EXPECT_TRUE(close_to(out.dqkv, ref.dqkv, bound(f, ref.dqkv, ref.d_fmt, ref.d_f32))) << "dqkv";
  }
}

// Any tile size a sweep may set (VKAMP_ATTENTION_TILES=RxT: vkamp-bench
// attention --tiles) gives the reference's results: rows that do not divide
// the tile's values (the staging loop's last share), one workgroup over
// every query, tiles longer than the sequence; bad values are refused.
TEST_F(AttentionPath, AnyTileSizeMatchesTheReference) {
  UsePaths fused = attention_on(vkamp::AttentionPath::fused);
  const Format f = Format::F16;
  expect_reference_at_tiles({.batch = 2, .seq = 33, .channels = 48, .heads = 3}, {"5x3", "33x64", "1x1"});
  const std::string too_many = std::to_string(ctx().info().max_workgroup_invocations + 1) + "x4";
  for (const std::string& bad : {std::string("0x4"), std::string("64x"), std::string("64x32x"), std::string("x"),
                                 std::string("64x257"), too_many, std::string("64x256")}) {
    SCOPED_TRACE(bad);
    UsePaths use = attention_on(vkamp::AttentionPath::fused, bad);
    // 64x256 at a head of 128 asks for 264 KiB of shared memory.
    const AttentionShape wide{.batch = 1, .seq = 4, .channels = 128, .heads = 1};
    Buffer qkv(ctx(), 3 * 4 * 128 * 2), y(ctx(), 4 * 128 * 2), kept(ctx(), 4 * 4);
    Sequence seq(ctx());
    seq.begin();
    EXPECT_THROW(ops::attention_forward(seq, f, qkv, y, kept, wide), ConfigError);
  }
}

// VKAMP_ATTENTION=mma (the fused path on 16 x 16 fragments: tensor cores
// where the GEMM has them, else their emulation) runs where the format
// computes in fp16 and every row is computed; elsewhere the fused kernels.
TEST_F(AttentionPath, MmaRunsWhereItCan) {
  UsePaths mma = attention_on(vkamp::AttentionPath::mma);
  EXPECT_TRUE(ops::attention_fused(ctx(), 48, 3)) << "mma keeps the fused path's logsumexp";
  const bool fp16_math = ctx().variant(Format::F16) == "fp16";
  auto first_kernel = [&](Format f, bool last_only) {
    const AttentionShape s{.batch = 1, .seq = 5, .channels = 48, .heads = 3, .last_only = last_only};
    const uint32_t eb = format_bytes(f);
    Buffer qkv(ctx(), 3 * 5 * 48 * eb), y(ctx(), 5 * 48 * eb), kept(ctx(), 3 * 5 * 4);
    qkv.fill(0);
    Sequence seq(ctx(), true);
    seq.begin();
    ops::attention_forward(seq, f, qkv, y, kept, s);
    seq.end();
    seq.run();
    return seq.timings().at(0).label;
  };
  EXPECT_EQ(first_kernel(Format::F16, false), fp16_math ? "attention_mma" : "attention_fused");
  EXPECT_EQ(first_kernel(Format::F16, true), "attention_fused") << "decoding one row";
  EXPECT_EQ(first_kernel(Format::F32, false), "attention_fused");
  EXPECT_EQ(first_kernel(Format::BF16, false), "attention_fused");
}

// The mma kernels at tile sizes a sweep may set: three warps over 16-key
// tiles, two warps over three-chunk tiles, one warp over two chunks (every
// warp's diagonal in some tile but its first), against the reference;
// rows or tiles off multiples of 16 are refused.
TEST_F(AttentionPath, MmaTileSizesMatchTheReference) {
  UsePaths mma = attention_on(vkamp::AttentionPath::mma);
  const Format f = Format::F16;
  expect_reference_at_tiles({.batch = 2, .seq = 67, .channels = 48, .heads = 3}, {"48x16", "32x48", "16x32"});
  if (ctx().variant(f) != "fp16") GTEST_SKIP() << "fp16 storage only: the mma kernels do not run";
  for (const char* bad : {"24x16", "32x24", "16x8"}) {
    SCOPED_TRACE(bad);
    UsePaths use = attention_on(vkamp::AttentionPath::mma, bad);
    Buffer qkv(ctx(), 3 * 4 * 48 * 2), y(ctx(), 4 * 48 * 2), kept(ctx(), 3 * 4 * 4);
    Sequence seq(ctx());
    seq.begin();
    EXPECT_THROW(ops::attention_forward(seq, f, qkv, y, kept, {.batch = 1, .seq = 4, .channels = 48, .heads = 3}),
                 ConfigError);
  }
}

INSTANTIATE_TEST_SUITE_P(Shaders, AttentionGrad, ::testing::ValuesIn(kShapes),
                         [](const ::testing::TestParamInfo<AttentionShape>& info) {
                           return "fp32_" + shape_name(info.param);
                         });

// Real models' heads on every path, the device's and those a variant picks
// (materialized, fused, and in fp16 the mma kernels, emulated where the
// device has no tensor cores), on the same inputs against one reference:
// Qwen2.5-0.5B's 14 heads of 64 (hidden 896) over 128 positions. As
// `large`: the longest sequences a CPU driver's fused kernels take at
// heads of 64 and 128 (attention_fused.cpp's loop_iterations: an
// invocation walks its row's keys, 2 head_dim + 2 iterations each, under
// lavapipe's 65,535; 464 and 235 positions on its 16 x 16 tiles; the
// emulated mma kernels' at 64, 352, attention_mma.cpp's), so a count that
// undercut the shaders' shows here (one did: 472 passed it and left rows
// unwritten); and Qwen2.5-1.5B's 12
// heads of 128 (hidden 1,536) over 1,024 positions, past that limit. A path
// refused there (Error: loop iterations, shared memory) is said and
// skipped; the materialized path runs at every size.
class AttentionRealSize : public Attention {};

TEST_P(AttentionRealSize, ForwardAndBackwardOnEveryPath) {
  const AttentionShape& s = shape();
  auto qkv = random_qkv(), dy = random_dy();
  const Reference ref = reference(fmt(), qkv, dy, s);
  const double y_bound = bound(fmt(), ref.y, ref.y_fmt, ref.y_f32), d_bound = bound(fmt(), ref.dqkv, ref.d_fmt, ref.d_f32);
  for (vkamp::AttentionPath path :
       {vkamp::AttentionPath::materialized, vkamp::AttentionPath::fused, vkamp::AttentionPath::mma}) {
    if (path == vkamp::AttentionPath::mma && fmt() != Format::F16) continue;  // fp16 only
    const char* name = path == vkamp::AttentionPath::materialized ? "materialized"
                       : path == vkamp::AttentionPath::fused      ? "fused"
                                                                  : "mma";
    SCOPED_TRACE(name);
    KernelPaths paths;
    paths.attention = path;
    if (path == vkamp::AttentionPath::mma && ctx().gemm_mma() == GemmMma::off) paths.gemm_mma = GemmMma::emulated;
    UsePaths use(paths);
    Result out;
    try {
      out = run(fmt(), s, qkv, dy);
    } catch (const Error& e) {
      // The refusals the op documents: a CPU driver's loop limit, and a
      // head too large for the device's shared memory (mma's at 128 on lavapipe).
      const std::string why = e.what();
      const bool refused = (ctx().info().type == VK_PHYSICAL_DEVICE_TYPE_CPU &&
                            why.find("loop iterations") != std::string::npos) ||
                           why.find("bytes of shared memory") != std::string::npos;
      if (path != vkamp::AttentionPath::materialized && refused) {
        std::printf("[ refused  ] %s: %s\n", name, e.what());
        continue;
      }
      throw;
    }
    EXPECT_TRUE(close_to(out.y, ref.y, y_bound)) << "y";
    EXPECT_TRUE(close_to(out.dqkv, ref.dqkv, d_bound)) << "dqkv";
  }
}

INSTANTIATE_TEST_SUITE_P(RealSize, AttentionRealSize,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats),
                                            ::testing::Values(AttentionShape{.batch = 1, .seq = 128, .channels = 896,
                                                                             .heads = 14})),
                         format_shape_name);
constexpr AttentionShape kLargeShapes[] = {{.batch = 1, .seq = 352, .channels = 896, .heads = 14},
                                           {.batch = 1, .seq = 464, .channels = 896, .heads = 14},
                                           {.batch = 1, .seq = 235, .channels = 1536, .heads = 12},
                                           {.batch = 1, .seq = 1024, .channels = 1536, .heads = 12}};
INSTANTIATE_TEST_SUITE_P(Large, AttentionRealSize,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::ValuesIn(kLargeShapes)),
                         format_shape_name);

}  // namespace
}  // namespace vkamp::test
