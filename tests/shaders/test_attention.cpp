// Causal self-attention (ops/attention.hpp) against a double reference
// written from nanoGPT's definition, in every format at awkward shapes:
// seq 1 (each position sees only itself: y = v), 7, 33 and 130 (rows longer
// than the 128 invocations of the softmax workgroups); heads 1, 2, 3; head
// sizes 1, 4, 5, 16; batch 1 and 3. Outputs are guarded and poisoned, and so
// are kept and workspace, so a read of anything the op did not write shows
// up as NaN. Also: the causal mask (later positions cannot change earlier
// outputs), a NaN in q, k or v reaching exactly the outputs that depend on
// it, forward and backward, accumulation into dqkv, and the backward
// against Richardson-extrapolated central differences of the GPU forward.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "vkamp/ops/attention.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

using ops::AttentionShape;

constexpr AttentionShape kShapes[] = {
    {.batch = 1, .seq = 1, .channels = 1, .heads = 1},   {.batch = 3, .seq = 7, .channels = 10, .heads = 2},
    {.batch = 1, .seq = 33, .channels = 48, .heads = 3}, {.batch = 3, .seq = 33, .channels = 3, .heads = 3},
    {.batch = 3, .seq = 1, .channels = 16, .heads = 1},  {.batch = 1, .seq = 130, .channels = 8, .heads = 2}};

using FormatShape = std::tuple<Format, AttentionShape>;

std::string shape_name(const AttentionShape& s) {
  return "b" + std::to_string(s.batch) + "_t" + std::to_string(s.seq) + "_c" + std::to_string(s.channels) + "_h" +
         std::to_string(s.heads);
}

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// The reference and, per output element, the two error magnitudes of
// ErrorBudget (guarded.hpp): what was rounded to the format on the way to
// it, and the fp32 sums' terms scaled by their random-walk growth.
struct Reference {
  std::vector<double> y, dqkv;
  std::vector<double> y_fmt, y_f32, d_fmt, d_f32;
};

// From the definition, in double. Index helpers follow the layouts of
// attention.hpp: qkv[b, t, part * C + h * hd + e], y and dy [b, t, h * hd + e].
//
// Error model, in units of each format's unit roundoff:
//  - S = alpha q.k is rounded once to the format, so each score errs by
//    |S|; a softmax moves by at most twice the largest score error of its
//    row, relatively: P errs by (1 + 2 smax) |P| with smax the row's
//    largest |S| (the 1: P's own rounding), plus the smallest normal.
//  - fp32: the score's dot product (sqrt(hd + 1) alpha sum|q k|), exp (3 +
//    2 |x| ulps, the Vulkan precision), the row sum (sqrt(t + 1)), then the
//    GEMMs' sums (sqrt(t + 2)): bounded by f32_row times the terms' magnitudes.
//  - The backward rounds dP (its terms |dy v|), dS (its value and, through
//    the dot, p times the dP errors) and dq, dk, dv once each.
Reference reference(Format fmt, const std::vector<float>& qkv, const std::vector<float>& dy,
                    const AttentionShape& s) {
  const uint32_t T = s.seq, C = s.channels, H = s.heads, hd = C / H;
  const double alpha = 1.0 / std::sqrt(double(hd)), sn = smallest_normal(fmt);
  auto at = [&](uint32_t b, uint32_t t, uint32_t part, uint32_t h, uint32_t e) {
    return (size_t(b) * T + t) * 3 * C + part * C + h * hd + e;
  };
  auto yat = [&](uint32_t b, uint32_t t, uint32_t h, uint32_t e) { return (size_t(b) * T + t) * C + h * hd + e; };
  Reference r;
  r.y.assign(size_t(s.batch) * T * C, 0.0);
  r.y_fmt = r.y_f32 = r.y;
  r.dqkv.assign(qkv.size(), 0.0);
  r.d_fmt = r.d_f32 = r.dqkv;
  std::vector<double> sc(T), p(T), pe(T), dp(T), dpm(T), ds(T), dse(T);
  for (uint32_t b = 0; b < s.batch; ++b)
    for (uint32_t h = 0; h < H; ++h)
      for (uint32_t t = 0; t < T; ++t) {
        // Scores and softmax over j <= t.
        double m = -INFINITY, smax = 0, dotmax = 0;
        for (uint32_t j = 0; j <= t; ++j) {
          double d = 0, da = 0;
          for (uint32_t e = 0; e < hd; ++e) {
            d += double(qkv[at(b, t, 0, h, e)]) * qkv[at(b, j, 1, h, e)];
            da += std::abs(double(qkv[at(b, t, 0, h, e)]) * qkv[at(b, j, 1, h, e)]);
          }
          sc[j] = alpha * d;
          m = std::max(m, sc[j]);
          smax = std::max(smax, std::abs(sc[j]));
          dotmax = std::max(dotmax, alpha * da);
        }
        double sum = 0;
        for (uint32_t j = 0; j <= t; ++j) sum += std::exp(sc[j] - m);
        const double f32_row = std::sqrt(hd + 1.0) * dotmax + 3 + 4 * smax + std::sqrt(t + 1.0) + std::sqrt(t + 2.0);
        for (uint32_t j = 0; j <= t; ++j) {
          p[j] = std::exp(sc[j] - m) / sum;
          pe[j] = (1 + 2 * smax) * std::abs(p[j]) + sn;  // P's error in the format's units
        }
        // Forward: y = sum_j p_j v_j.
        for (uint32_t e = 0; e < hd; ++e) {
          double v = 0, fm = 0, f3 = 0;
          for (uint32_t j = 0; j <= t; ++j) {
            double vj = qkv[at(b, j, 2, h, e)];
            v += p[j] * vj;
            fm += pe[j] * std::abs(vj);
            f3 += std::abs(p[j] * vj);
          }
          size_t i = yat(b, t, h, e);
          r.y[i] = v;
          r.y_fmt[i] = std::abs(v) + sn + fm;
          r.y_f32[i] = f32_row * f3;
        }
        // Backward: dP, dS, then dq, dk, dv.
        double pdp = 0, pdpm = 0;
        for (uint32_t j = 0; j <= t; ++j) {
          double d = 0, da = 0;
          for (uint32_t e = 0; e < hd; ++e) {
            d += double(dy[yat(b, t, h, e)]) * qkv[at(b, j, 2, h, e)];
            da += std::abs(double(dy[yat(b, t, h, e)]) * qkv[at(b, j, 2, h, e)]);
          }
          dp[j] = d;
          dpm[j] = da;
          pdp += p[j] * d;
          pdpm += std::abs(p[j]) * (da + std::abs(d));
        }
        for (uint32_t j = 0; j <= t; ++j) {
          ds[j] = p[j] * (dp[j] - pdp);
          dse[j] = (2 + 2 * smax) * std::abs(ds[j]) + sn + std::abs(p[j]) * (dpm[j] + pdpm);
        }
        for (uint32_t e = 0; e < hd; ++e) {
          const double g = dy[yat(b, t, h, e)];
          size_t iq = at(b, t, 0, h, e);
          for (uint32_t j = 0; j <= t; ++j) {
            double kj = qkv[at(b, j, 1, h, e)], qt = qkv[iq];
            size_t ik = at(b, j, 1, h, e), iv = at(b, j, 2, h, e);
            r.dqkv[iq] += alpha * ds[j] * kj;
            r.d_fmt[iq] += alpha * dse[j] * std::abs(kj);
            r.d_f32[iq] += f32_row * alpha * (std::abs(ds[j] * kj) + std::abs(p[j]) * dpm[j] * std::abs(kj));
            r.dqkv[ik] += alpha * ds[j] * qt;
            r.d_fmt[ik] += alpha * dse[j] * std::abs(qt);
            r.d_f32[ik] += f32_row * alpha * (std::abs(ds[j] * qt) + std::abs(p[j]) * dpm[j] * std::abs(qt));
            r.dqkv[iv] += p[j] * g;
            r.d_fmt[iv] += pe[j] * std::abs(g);
            r.d_f32[iv] += f32_row * std::abs(p[j] * g);
          }
        }
      }
  // dq, dk and dv are each rounded once more, in their final sums.
  for (size_t i = 0; i < r.dqkv.size(); ++i) r.d_fmt[i] += std::abs(r.dqkv[i]) + sn;
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
  Buffer kept = poisoned(ctx(), f, s.batch * ops::attention_kept_elements(f, s.seq, s.channels, s.heads));
  Buffer work = poisoned(ctx(), f, s.batch * ops::attention_workspace_elements(f, s.seq, s.channels, s.heads));
  run_once([&](Sequence& seq) {
    ops::attention_forward(seq, f, bqkv, by, kept, s);
    if (backward) ops::attention_backward(seq, f, kept, bdy, bd, work, s, dqkv0 != nullptr);
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

TEST_P(Attention, BackwardAccumulates) {
  auto qkv = random_qkv(), dy = random_dy();
  auto old = random_values(3 * tokens(), -1, 1, fmt());
  Result out = run(fmt(), shape(), qkv, dy, &old);
  Reference ref = reference(fmt(), qkv, dy, shape());
  // One more fp32 add, then one more rounding to the format, of the total.
  for (size_t i = 0; i < old.size(); ++i) {
    ref.dqkv[i] += old[i];
    ref.d_fmt[i] += std::abs(ref.dqkv[i]) + std::abs(old[i]);
  }
  EXPECT_TRUE(close_to(out.dqkv, ref.dqkv, bound(fmt(), ref.dqkv, ref.d_fmt, ref.d_f32)));
}

// The mask: q, k and v of positions after t0 redrawn leave y at positions
// up to t0 bit for bit the same (the sums skip them rather than weigh them 0).
TEST_P(Attention, LaterPositionsDoNotChangeEarlierOutputs) {
  const AttentionShape& s = shape();
  if (s.seq < 2) GTEST_SKIP() << "one position: nothing comes later";
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

INSTANTIATE_TEST_SUITE_P(Shaders, Attention,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::ValuesIn(kShapes)),
                         [](const ::testing::TestParamInfo<FormatShape>& info) {
                           return std::string(format_name(std::get<0>(info.param))) + "_" +
                                  shape_name(std::get<1>(info.param));
                         });

// L(qkv) = sum(G .* y(qkv)) in fp32 along a random direction V: the
// Richardson extrapolation (4 D(h/2) - D(h)) / 3 of the central differences
// D(h) = (L(qkv + hV) - L(qkv - hV)) / 2h (truncation O(h^4)) against
// <dqkv, V> from the backward with dy = G.
class AttentionGrad : public GpuTestP<AttentionShape> {};

TEST_P(AttentionGrad, BackwardMatchesFiniteDifferences) {
  const Format f = Format::F32;
  const AttentionShape& s = GetParam();
  const size_t ny = size_t(s.batch) * s.seq * s.channels, n = 3 * ny;
  auto qkv = random_values(n, -1, 1, f), g = random_values(ny, -1, 1, f), v = random_values(n, -1, 1, f);
  auto loss = [&](double h) {
    std::vector<float> at(n);
    for (size_t i = 0; i < n; ++i) at[i] = float(qkv[i] + h * v[i]);
    std::vector<float> y = run(f, s, at, g, nullptr, false).y;
    double l = 0;
    for (size_t i = 0; i < ny; ++i) l += double(g[i]) * y[i];
    return l;
  };
  const double h = 0.02;
  auto central = [&](double step) { return (loss(step) - loss(-step)) / (2 * step); };
  const double fd = (4 * central(h / 2) - central(h)) / 3;
  std::vector<float> d = run(f, s, qkv, g).dqkv;
  double dot = 0, d_norm = 0, v_norm = 0;
  for (size_t i = 0; i < n; ++i) {
    dot += double(d[i]) * v[i];
    d_norm += double(d[i]) * d[i];
    v_norm += double(v[i]) * v[i];
  }
  // Relative to |dqkv| |V| (as LayerNorm's check): truncation (h / 0.58)^4
  // times the attention's fourth derivatives, below 1e-5 for scores of
  // order 1; the forward's fp32 rounding, ~1e-6 of each y with random signs
  // through L, divided by the steps: below 1e-5 of |dqkv| |V| at these
  // sizes. 1e-4 leaves a margin of 10, and still catches a gradient wrong by
  // a few percent in one of q, k or v.
  const double err = std::abs(dot - fd) / std::sqrt(d_norm * v_norm);
  EXPECT_LE(err, 1e-4) << "<dqkv, V> " << dot << ", extrapolated central difference " << fd;
}

INSTANTIATE_TEST_SUITE_P(Shaders, AttentionGrad, ::testing::ValuesIn(kShapes),
                         [](const ::testing::TestParamInfo<AttentionShape>& info) {
                           return "fp32_" + shape_name(info.param);
                         });

}  // namespace
}  // namespace vkamp::test
