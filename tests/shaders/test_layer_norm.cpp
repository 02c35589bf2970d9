// LayerNorm (and RMSNorm, the same kernels without the mean and the bias)
// over the last dimension (rows x cols) and its gradients against
// double references, at every awkward row count and cols 1 (degenerate: the
// variance is 0, so y = beta, dx = 0, dgamma = 0, as in PyTorch), 5, 64,
// 127 (one lane of the 128-wide row workgroup idle) and 300 (each lane sums
// several columns); an inf or NaN in a row makes that row, and only it,
// NaN; and, in fp32, more rows than the 65535 workgroups of one dispatch,
// and rows far from zero (x ~ 1000), where E[x^2] - E[x]^2 would cancel:
// the forward against the reference and the backward against central
// differences of the forward.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>

#include "support/cases.hpp"
#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "vkamp/shader_registry.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "support/spirv_words.hpp"
#include "vkamp/ops/layer_norm.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

constexpr uint32_t kCols[] = {1, 5, 64, 127, 300};

struct Reference {
  std::vector<double> y, mean, rstd, dx, dgamma, dbeta;
  // Per column, the sum of its terms' sizes (sum |dy xhat|, sum |dy|): what
  // the fp32 column sums' roundings scale with (column_abs_error).
  std::vector<double> dgamma_size, dbeta_size;
};

// From the definition, in double: two-pass mean and biased variance.
Reference reference(const std::vector<float>& x, const std::vector<float>& gamma, const std::vector<float>& beta,
                    const std::vector<float>& dy, uint32_t rows, uint32_t cols) {
  Reference ref;
  ref.y.resize(x.size());
  ref.dx.resize(x.size());
  ref.dgamma.assign(cols, 0.0);
  ref.dbeta.assign(cols, 0.0);
  ref.dgamma_size.assign(cols, 0.0);
  ref.dbeta_size.assign(cols, 0.0);
  const double eps = ops::kLayerNormEps;  // the float the shader adds, widened exactly
  for (uint32_t r = 0; r < rows; ++r) {
    const float* xr = &x[size_t(r) * cols];
    const float* dyr = &dy[size_t(r) * cols];
    double mean = 0, var = 0;
    for (uint32_t c = 0; c < cols; ++c) mean += xr[c];
    mean /= cols;
    for (uint32_t c = 0; c < cols; ++c) var += (xr[c] - mean) * (xr[c] - mean);
    double rstd = 1.0 / std::sqrt(var / cols + eps);
    ref.mean.push_back(mean);
    ref.rstd.push_back(rstd);
    double mg = 0, mgx = 0;
    for (uint32_t c = 0; c < cols; ++c) {
      double xhat = (xr[c] - mean) * rstd, g = double(dyr[c]) * gamma[c];
      ref.y[size_t(r) * cols + c] = xhat * gamma[c] + beta[c];
      mg += g / cols;
      mgx += g * xhat / cols;
      ref.dgamma[c] += dyr[c] * xhat;
      ref.dbeta[c] += dyr[c];
      ref.dgamma_size[c] += std::abs(dyr[c] * xhat);
      ref.dbeta_size[c] += std::abs(dyr[c]);
    }
    for (uint32_t c = 0; c < cols; ++c) {
      double xhat = (xr[c] - mean) * rstd, g = double(dyr[c]) * gamma[c];
      ref.dx[size_t(r) * cols + c] = rstd * (g - mg - xhat * mgx);
    }
  }
  return ref;
}

std::vector<double> plus(std::vector<double> a, const std::vector<float>& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}

struct Result {
  std::vector<float> y, mean, rstd, dx, dgamma, dbeta;
};

// The fp32 roundings a row statistic goes through: ceil(cols / 128)
// sequential adds per invocation, then the 7 levels of the workgroup tree.
double sum_depth(uint32_t cols) { return std::ceil(cols / 128.0) + 7; }

// The forward in fp32 before the one rounding to the format: the sums
// (sum_depth ulps of the row's scale; the corrected two-pass mean keeps x -
// mean exact, so it holds far from zero too), inversesqrt (2 ulps, the
// Vulkan precision), then xhat * gamma + beta (3 roundings): sum_depth + 6.
double forward_bound(Format fmt, uint32_t cols) {
  return nmse_bound(fmt, 1) + nmse_bound(Format::F32, sum_depth(cols) + 6);
}

class LayerNorm : public MatrixShaderTest {
 protected:
  // The test's size, plus extra_rows_ for the test of the row striding.
  uint32_t rows() const { return extra_rows_ + MatrixShaderTest::rows(); }
  uint32_t extra_rows_ = 0;

  // Forward then backward in one recording, every output poisoned first.
  // `old` (dx, dgamma, dbeta) makes the backward accumulate into them.
  Result run(Format f, const std::vector<float>& x, const std::vector<float>& gamma, const std::vector<float>& beta,
             const std::vector<float>& dy, uint32_t cols, const Result* old = nullptr) {
    uint32_t n = rows() * cols;
    Buffer xb = upload(ctx(), f, x), gb = upload(ctx(), f, gamma), bb = upload(ctx(), f, beta);
    Buffer dyb = upload(ctx(), f, dy);
    Buffer yb = poisoned(ctx(), f, n), stats = poisoned(ctx(), Format::F32, 2 * size_t(rows()));
    Buffer dxb = old ? upload(ctx(), f, old->dx) : poisoned(ctx(), f, n);
    Buffer dgb = old ? upload(ctx(), f, old->dgamma) : poisoned(ctx(), f, cols);
    Buffer dbb = old ? upload(ctx(), f, old->dbeta) : poisoned(ctx(), f, cols);
    Sequence seq(ctx());
    seq.begin();
    ops::layer_norm_forward(seq, f, xb, gb, bb, yb, stats, rows(), cols);
    ops::layer_norm_backward_input(seq, f, xb, gb, stats, dyb, dxb, rows(), cols, old != nullptr);
    ops::layer_norm_backward_params(seq, f, xb, stats, dyb, dgb, dbb, rows(), cols, old != nullptr, old != nullptr);
    seq.end();
    seq.run();
    Result out{download(yb, f, n), {}, {}, download(dxb, f, n), download(dgb, f, cols), download(dbb, f, cols)};
    std::vector<float> st = download(stats, Format::F32, 2 * size_t(rows()));
    for (uint32_t r = 0; r < rows(); ++r) {
      out.mean.push_back(st[2 * r]);
      out.rstd.push_back(st[2 * r + 1]);
    }
    return out;
  }

  // The row lengths for_each_layer_cols visits.
  std::span<const uint32_t> cols_ = kCols;

  template <class Check>
  void for_each_layer_cols(Check check) {
    for (uint32_t cols : cols_) {
      SCOPED_TRACE(::testing::Message() << rows() << " x " << cols);
      check(cols);
    }
  }

  // dx = rstd (g - mean(g) - xhat mean(g xhat)) in fp32: the two row sums
  // (sum_depth), the statistics it reads (the forward's), and 6 roundings
  // of its own; the projection removes 2 of cols directions of g, which for
  // cols >= 5 leaves most of |g|, so allow twice that, then one rounding.
  double dx_bound(uint32_t cols) const {
    return nmse_bound(fmt(), 1) + nmse_bound(Format::F32, 2 * (sum_depth(cols) + 6 + 6));
  }
  // Column sums over rows of terms rounded as the forward rounds xhat, in
  // fp32 (sqrt(rows) ulps of random-walk, as bias_grad), then one rounding.
  double column_bound(uint32_t cols) const {
    return nmse_bound(fmt(), 1) + nmse_bound(Format::F32, sum_depth(cols) + 6 + std::sqrt(double(rows())));
  }
  // The bound above is relative to the sum, but a column's terms may cancel
  // (7 values of dy in [-1, 3) once summed to 0.0015, whose fp32 sum then
  // erred by 4e-5 of it), and the error is still that of the terms: an
  // fp32 sum of `rows` terms, each carrying the forward's roundings of xhat
  // and its product, errs by at most (rows + sum_depth + 7) u sum |term| in
  // any order (u = 2^-24); the stored result, if below the format's normal
  // range, by smallest_normal too. close_to's absolute term, from the
  // largest finite sum |term| (`size`, Reference::dgamma_size or dbeta_size)
  // plus what an accumulated old value adds to it.
  double column_abs_error(uint32_t cols, const std::vector<double>& size, const std::vector<float>* old = nullptr) const {
    double worst = 0;
    for (size_t c = 0; c < size.size(); ++c)
      if (std::isfinite(size[c])) worst = std::max(worst, size[c] + (old ? std::abs((*old)[c]) : 0.0));
    return (rows() + sum_depth(cols) + 7) * 0x1p-24 * worst + smallest_normal(fmt());
  }

  struct Inputs {
    std::vector<float> x, gamma, beta, dy;
  };
  // x around `offset`, gamma of either sign, dy with a positive mean so
  // that the dbeta column sums do not cancel; all rounded to the format.
  Inputs inputs(uint32_t cols, float offset = 0) {
    size_t n = size_t(rows()) * cols;
    return {random_values(n, offset - 4, offset + 4, fmt()), random_values(cols, -2, 2, fmt()),
            random_values(cols, -1, 1, fmt()), random_values(n, -1, 3, fmt())};
  }
};

// The backward's g = dy * gamma is `precise`: the SPIR-V carries
// NoContraction on its multiply in every format, so no driver may fuse it
// into g - mean_c(g) (an fma there left the product's rounding error, times
// rstd, in dx where a one-column row must give exactly 0: 1e-5 on NVIDIA).
// lavapipe does not contract there, so the numbers alone cannot catch its
// loss; this can.
TEST(LayerNormSpirv, BackwardProductIsNotContracted) {
  constexpr uint32_t kOpDecorate = 71, kNoContraction = 42;
  for (const char* fmt : {"fp32", "fp16", "fp16s", "bf16", "cb16"}) {
    const ShaderCode* s = find_shader(std::string("layer_norm_grad.") + fmt);
    ASSERT_NE(s, nullptr) << fmt;
    EXPECT_GE(count_instructions({s->words, s->word_count}, kOpDecorate, 2, kNoContraction), 2u)
        << fmt << ": the two products g = dy * gamma";
  }
}

TEST_P(LayerNorm, ForwardAndBackward) {
  for_each_layer_cols([&](uint32_t cols) {
    Inputs in = inputs(cols);
    Result out = run(fmt(), in.x, in.gamma, in.beta, in.dy, cols);
    Reference ref = reference(in.x, in.gamma, in.beta, in.dy, rows(), cols);
    EXPECT_TRUE(close_to(out.y, ref.y, forward_bound(fmt(), cols)));
    // rstd: the variance's sums and inversesqrt, kept in fp32.
    EXPECT_TRUE(close_to(out.rstd, ref.rstd, nmse_bound(Format::F32, sum_depth(cols) + 2)));
    EXPECT_TRUE(close_to(out.dx, ref.dx, dx_bound(cols)));
    EXPECT_TRUE(close_to(out.dgamma, ref.dgamma, column_bound(cols), column_abs_error(cols, ref.dgamma_size)));
    EXPECT_TRUE(close_to(out.dbeta, ref.dbeta, column_bound(cols), column_abs_error(cols, ref.dbeta_size)));
  });
}

// Fixed-order sums, no atomics, on either row path (VKAMP_ROW_KERNEL).
TEST_P(LayerNorm, SameBitsEveryRun) {
  for_each_layer_cols([&](uint32_t cols) {
    Inputs in = inputs(cols);
    Result a = run(fmt(), in.x, in.gamma, in.beta, in.dy, cols);
    Result b = run(fmt(), in.x, in.gamma, in.beta, in.dy, cols);
    for (auto m : {&Result::y, &Result::mean, &Result::rstd, &Result::dx, &Result::dgamma, &Result::dbeta})
      EXPECT_EQ(0, std::memcmp((a.*m).data(), (b.*m).data(), (a.*m).size() * sizeof(float)));
  });
}

TEST_P(LayerNorm, BackwardAccumulates) {
  for_each_layer_cols([&](uint32_t cols) {
    Inputs in = inputs(cols);
    size_t n = size_t(rows()) * cols;
    Result old{{}, {}, {}, random_values(n, -1, 1, fmt()), random_values(cols, 0, 4, fmt()),
               random_values(cols, 0, 4, fmt())};
    Result out = run(fmt(), in.x, in.gamma, in.beta, in.dy, cols, &old);
    Reference ref = reference(in.x, in.gamma, in.beta, in.dy, rows(), cols);
    // One more fp32 add before the rounding to the format.
    EXPECT_TRUE(close_to(out.dx, plus(ref.dx, old.dx), dx_bound(cols) + nmse_bound(Format::F32, 1)));
    EXPECT_TRUE(close_to(out.dgamma, plus(ref.dgamma, old.dgamma), column_bound(cols) + nmse_bound(Format::F32, 1),
                         column_abs_error(cols, ref.dgamma_size, &old.dgamma)));
    EXPECT_TRUE(close_to(out.dbeta, plus(ref.dbeta, old.dbeta), column_bound(cols) + nmse_bound(Format::F32, 1),
                         column_abs_error(cols, ref.dbeta_size, &old.dbeta)));
  });
}

TEST_P(LayerNorm, NonFiniteInputPoisonsOnlyItsRow) {
  for (float special : {kInf, -kInf, kNan}) {
    for_each_layer_cols([&](uint32_t cols) {
      SCOPED_TRACE(::testing::Message() << "x special " << special);
      Inputs in = inputs(cols);
      uint32_t bad = std::uniform_int_distribution<uint32_t>(0, rows() - 1)(rng());
      in.x[size_t(bad) * cols + std::uniform_int_distribution<uint32_t>(0, cols - 1)(rng())] = special;
      Result out = run(fmt(), in.x, in.gamma, in.beta, in.dy, cols);
      Reference ref = reference(in.x, in.gamma, in.beta, in.dy, rows(), cols);
      // The reference's row `bad` is NaN throughout (its mean or variance
      // is); close_to wants NaN exactly there and finite values elsewhere.
      for (uint32_t c = 0; c < cols; ++c) ASSERT_TRUE(std::isnan(ref.y[size_t(bad) * cols + c]));
      EXPECT_TRUE(close_to(out.y, ref.y, forward_bound(fmt(), cols)));
      EXPECT_TRUE(close_to(out.dx, ref.dx, dx_bound(cols)));
      // dgamma sums xhat over every row, so every column is NaN; dbeta is not.
      EXPECT_TRUE(close_to(out.dgamma, ref.dgamma, column_bound(cols), column_abs_error(cols, ref.dgamma_size)));
      EXPECT_TRUE(close_to(out.dbeta, ref.dbeta, column_bound(cols), column_abs_error(cols, ref.dbeta_size)));
    });
  }
}

// Far from zero, in fp32 only: a 16-bit format cannot hold 1000 +- 4 finely
// enough for the question to mean anything.
class LayerNormFp32 : public LayerNorm {};

TEST_P(LayerNormFp32, MoreRowsThanOneDispatchHasWorkgroups) {
  // The row shaders take one workgroup per row, at most 65535 per
  // dispatch, each striding on: rows 65535 on come round a second time.
  // The parameter gradients sum 1024-row chunks: past 65535 rows, a single
  // loop over the rows would stop early on lavapipe.
  extra_rows_ = 65535;
  const uint32_t cols = 5;
  Inputs in = inputs(cols);
  Result out = run(fmt(), in.x, in.gamma, in.beta, in.dy, cols);
  Reference ref = reference(in.x, in.gamma, in.beta, in.dy, rows(), cols);
  EXPECT_TRUE(close_to(out.y, ref.y, forward_bound(fmt(), cols)));
  EXPECT_TRUE(close_to(out.dx, ref.dx, dx_bound(cols)));
  // Relative bounds only: over 65,542 rows column_abs_error would hide a
  // lost row, and so many rows keep dbeta's sums (dy's mean is 1) far from
  // cancelling; dgamma's cancel as a random walk, which column_bound allows.
  EXPECT_TRUE(close_to(out.dgamma, ref.dgamma, column_bound(cols)));
  EXPECT_TRUE(close_to(out.dbeta, ref.dbeta, column_bound(cols)));
}

TEST_P(LayerNormFp32, ForwardFarFromZero) {
  // x in [996, 1004): E[x^2] ~ 1e6 has an fp32 ulp of 0.06 against a
  // variance of 5.3, and even x - fl(mean) is off by up to 3e-5 (half an
  // ulp of 1000), 1e-5 of the row's scale, an NMSE ~1e-10, far above the
  // bound. The corrected two-pass forward keeps forward_bound, as at zero.
  for_each_layer_cols([&](uint32_t cols) {
    Inputs in = inputs(cols, 1000);
    Result out = run(fmt(), in.x, in.gamma, in.beta, in.dy, cols);
    Reference ref = reference(in.x, in.gamma, in.beta, in.dy, rows(), cols);
    EXPECT_TRUE(close_to(out.y, ref.y, forward_bound(fmt(), cols)));
    // The mean, ~1000, rounded to fp32 once after the corrected sums.
    EXPECT_TRUE(close_to(out.mean, ref.mean, nmse_bound(Format::F32, 2)));
    EXPECT_TRUE(close_to(out.rstd, ref.rstd, nmse_bound(Format::F32, sum_depth(cols) + 2)));
  });
}

TEST_P(LayerNormFp32, BackwardMatchesFiniteDifferencesFarFromZero) {
  // L(x) = sum(r * y(x)) with x in [999, 1001); dL/dx from the backward with
  // dy = r, against (L(x + h v) - L(x - h v)) on the GPU forward, along a
  // random direction v. cols 1 is left out: y = beta there, so both sides
  // are exactly 0 (ForwardAndBackward checks dx = 0).
  const float h = 0.01f;
  for (uint32_t cols : {5u, 64u, 300u}) {
    SCOPED_TRACE(::testing::Message() << rows() << " x " << cols);
    size_t n = size_t(rows()) * cols;
    std::vector<float> x = random_values(n, 999, 1001, Format::F32), gamma = random_values(cols, 0.5f, 1.5f, Format::F32),
                       beta = random_values(cols, -1, 1, Format::F32), r = random_values(n, -1, 1, Format::F32),
                       v = random_values(n, -1, 1, Format::F32);
    std::vector<float> xp(n), xm(n);
    for (size_t i = 0; i < n; ++i) {
      xp[i] = x[i] + h * v[i];
      xm[i] = x[i] - h * v[i];
    }
    auto loss = [&](const std::vector<float>& at) {
      std::vector<float> y = run(Format::F32, at, gamma, beta, r, cols).y;
      double l = 0;
      for (size_t i = 0; i < n; ++i) l += double(r[i]) * y[i];
      return l;
    };
    double fd = loss(xp) - loss(xm);
    std::vector<float> dx = run(Format::F32, x, gamma, beta, r, cols).dx;
    double dot = 0, dx_norm = 0, step_norm = 0;
    for (size_t i = 0; i < n; ++i) {
      double step = double(xp[i]) - xm[i];  // the step taken: 2 h v rounded at ulp(1000) = 6e-5
      dot += dx[i] * step;
      dx_norm += double(dx[i]) * dx[i];
      step_norm += step * step;
    }
    // The relative error of <dx, step> against the difference, from:
    //  - truncation, the third-order term of the central difference,
    //    ~(h |v| / sigma)^2 with sigma the row's standard deviation: < (h /
    //    sigma)^2 for the narrowest row (0.58 for the uniform distribution,
    //    but 5 draws can lie close: a 33 x 5 draw once failed 0.58's bound
    //    by 4.5x);
    //  - the forward's rounding, ~20 fp32 ulps of each y (forward_bound),
    //    summed with random signs into L: ~20 * 6e-8 * sqrt(n) against
    //    |dx| |step| ~ 0.01 n, below 1e-4 for n >= 5;
    //  - the backward's xhat from the saved fp32 mean, off by up to half an
    //    ulp of 1000 (3e-5), 5e-5 of sigma.
    // A naive E[x^2] - E[x]^2 variance moves rstd by ~10% between the two
    // evaluations, errors of order 1 or more. Squared, with a margin of 4.
    // The narrowest row's deviation, sqrt(var + eps), from the reference's rstd.
    const std::vector<double> rstd = reference(x, gamma, beta, r, rows(), cols).rstd;
    double sigma = 1 / *std::max_element(rstd.begin(), rstd.end()), rel = (h / sigma) * (h / sigma) + 1e-4 + 5e-5;
    double err = (dot - fd) * (dot - fd) / (dx_norm * step_norm);
    EXPECT_LE(err, 4 * rel * rel) << "<dx, step> " << dot << ", central difference " << fd
                                  << ", narrowest row's deviation " << sigma;
  }
}

// RMSNorm (Llama's): the same kernels without the mean and the bias,
// y = x rstd w with rstd = 1 / sqrt(mean(x^2) + eps), dx = rstd (g - xhat
// mean(g xhat)) with g = dy w, dw = sum_r dy xhat; at Llama's eps (1e-6)
// and at 1e-5. The bounds are LayerNorm's, which round more: one pass of
// sums of squares, no cancelling mean.
struct RmsReference {
  std::vector<double> y, rstd, dx, dw, dw_size;
  double dx_scale = 0;  // the largest rstd |g| of an element: cols 1's absolute term
};

RmsReference rms_reference(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& dy,
                           uint32_t rows, uint32_t cols, float eps) {
  RmsReference ref;
  ref.y.resize(x.size());
  ref.dx.resize(x.size());
  ref.dw.assign(cols, 0.0);
  ref.dw_size.assign(cols, 0.0);
  for (uint32_t r = 0; r < rows; ++r) {
    const float* xr = &x[size_t(r) * cols];
    const float* dyr = &dy[size_t(r) * cols];
    double ms = 0;
    for (uint32_t c = 0; c < cols; ++c) ms += double(xr[c]) * xr[c];
    const double rstd = 1.0 / std::sqrt(ms / cols + double(eps));
    ref.rstd.push_back(rstd);
    double mgx = 0;
    for (uint32_t c = 0; c < cols; ++c) {
      const double xhat = xr[c] * rstd, g = double(dyr[c]) * w[c];
      ref.y[size_t(r) * cols + c] = xhat * w[c];
      mgx += g * xhat / cols;
      ref.dw[c] += dyr[c] * xhat;
      ref.dw_size[c] += std::abs(dyr[c] * xhat);
    }
    for (uint32_t c = 0; c < cols; ++c) {
      const double xhat = xr[c] * rstd, g = double(dyr[c]) * w[c];
      ref.dx[size_t(r) * cols + c] = rstd * (g - xhat * mgx);
      if (std::isfinite(rstd * g)) ref.dx_scale = std::max(ref.dx_scale, std::abs(rstd * g));
    }
  }
  return ref;
}

class RmsNorm : public LayerNorm {
 protected:
  struct RmsResult {
    std::vector<float> y, rstd, dx, dw;
  };
  // Forward then backward in one recording; `old` (dx, dw) makes the backward accumulate.
  RmsResult run_rms(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& dy,
                    uint32_t cols, float eps, const RmsResult* old = nullptr) {
    const Format f = fmt();
    const uint32_t n = rows() * cols;
    Buffer xb = upload(ctx(), f, x), wb = upload(ctx(), f, w), dyb = upload(ctx(), f, dy);
    Buffer yb = poisoned(ctx(), f, n), stats = poisoned(ctx(), Format::F32, 2 * size_t(rows()));
    Buffer dxb = old ? upload(ctx(), f, old->dx) : poisoned(ctx(), f, n);
    Buffer dwb = old ? upload(ctx(), f, old->dw) : poisoned(ctx(), f, cols);
    Sequence seq(ctx());
    seq.begin();
    ops::rms_norm_forward(seq, f, xb, wb, yb, stats, rows(), cols, eps);
    ops::rms_norm_backward_input(seq, f, xb, wb, stats, dyb, dxb, rows(), cols, old != nullptr);
    ops::rms_norm_backward_weight(seq, f, xb, stats, dyb, dwb, rows(), cols, old != nullptr);
    seq.end();
    seq.run();
    RmsResult out{download(yb, f, n), {}, download(dxb, f, n), download(dwb, f, cols)};
    const std::vector<float> st = download(stats, Format::F32, 2 * size_t(rows()));
    for (uint32_t r = 0; r < rows(); ++r) {
      EXPECT_EQ(st[2 * r], 0.0f) << "RMSNorm keeps a mean of 0 for the backward";
      out.rstd.push_back(st[2 * r + 1]);
    }
    return out;
  }
  // dx's absolute term: at cols 1, dx = rstd g (1 - xhat^2) = rstd g eps /
  // (x^2 + eps), a cancellation that fp32 resolves only to its rounding of
  // the two terms, each about rstd |g| times the roundings dx_bound counts.
  double dx_abs_error(uint32_t cols, const RmsReference& ref) const {
    const double roundings = 2 * (sum_depth(cols) + 6 + 6);
    return (cols == 1 ? roundings * 0x1p-24 * ref.dx_scale : 0.0) + smallest_normal(fmt());
  }
  void expect_reference(const RmsResult& out, const RmsReference& ref, uint32_t cols, const RmsResult* old = nullptr) {
    const double more = old ? nmse_bound(Format::F32, 1) : 0.0;  // the accumulating add
    std::vector<double> dx = ref.dx, dw = ref.dw;
    if (old) dx = plus(dx, old->dx), dw = plus(dw, old->dw);
    EXPECT_TRUE(close_to(out.y, ref.y, forward_bound(fmt(), cols), smallest_normal(fmt())));
    EXPECT_TRUE(close_to(out.rstd, ref.rstd, nmse_bound(Format::F32, sum_depth(cols) + 2)));
    EXPECT_TRUE(close_to(out.dx, dx, dx_bound(cols) + more, dx_abs_error(cols, ref)));
    EXPECT_TRUE(close_to(out.dw, dw, column_bound(cols) + more,
                         column_abs_error(cols, ref.dw_size, old ? &old->dw : nullptr)));
  }
  // Forward and backward at Llama's eps and 1e-5, every row length.
  void expect_forward_and_backward() {
    for (float eps : {1e-6f, 1e-5f}) {
      SCOPED_TRACE(::testing::Message() << "eps " << eps);
      for_each_layer_cols([&](uint32_t cols) {
        Inputs in = inputs(cols);
        expect_reference(run_rms(in.x, in.gamma, in.dy, cols, eps),
                         rms_reference(in.x, in.gamma, in.dy, rows(), cols, eps), cols);
      });
    }
  }
};

TEST_P(RmsNorm, ForwardAndBackward) { expect_forward_and_backward(); }

TEST_P(RmsNorm, BackwardAccumulatesAndRepeatsItsBits) {
  for_each_layer_cols([&](uint32_t cols) {
    Inputs in = inputs(cols);
    const size_t n = size_t(rows()) * cols;
    const RmsResult old{{}, {}, random_values(n, -1, 1, fmt()), random_values(cols, 0, 4, fmt())};
    const RmsResult a = run_rms(in.x, in.gamma, in.dy, cols, 1e-6f, &old);
    expect_reference(a, rms_reference(in.x, in.gamma, in.dy, rows(), cols, 1e-6f), cols, &old);
    const RmsResult b = run_rms(in.x, in.gamma, in.dy, cols, 1e-6f, &old);
    for (auto m : {&RmsResult::y, &RmsResult::rstd, &RmsResult::dx, &RmsResult::dw})
      EXPECT_EQ(0, std::memcmp((a.*m).data(), (b.*m).data(), (a.*m).size() * sizeof(float)));
  });
}

// An inf or NaN in x reaches its row and dw's columns exactly where the
// double reference has NaN; -0 in x gives -0 in y (no bias is added).
TEST_P(RmsNorm, NonFiniteInputPoisonsOnlyItsRowAndZerosKeepTheirSign) {
  for (float special : {kInf, -kInf, kNan}) {
    for_each_layer_cols([&](uint32_t cols) {
      SCOPED_TRACE(::testing::Message() << "x special " << special);
      Inputs in = inputs(cols);
      const uint32_t bad = std::uniform_int_distribution<uint32_t>(0, rows() - 1)(rng());
      in.x[size_t(bad) * cols + std::uniform_int_distribution<uint32_t>(0, cols - 1)(rng())] = special;
      // NaN makes the whole row NaN; an inf makes rstd 0, so its own y NaN
      // and the row's others 0 (as PyTorch), and the row's dx NaN.
      const RmsReference ref = rms_reference(in.x, in.gamma, in.dy, rows(), cols, 1e-6f);
      ASSERT_TRUE(std::isnan(ref.dx[size_t(bad) * cols]));
      expect_reference(run_rms(in.x, in.gamma, in.dy, cols, 1e-6f), ref, cols);
    });
  }
  const uint32_t cols = 5;
  Inputs in = inputs(cols);
  in.x[0] = -0.0f;
  in.gamma[0] = 1.0f;
  const RmsResult out = run_rms(in.x, in.gamma, in.dy, cols, 1e-6f);
  EXPECT_TRUE(std::signbit(out.y[0]) && out.y[0] == 0.0f) << out.y[0];
}

// The backward against central differences of the GPU forward, fp32, along
// a random direction v of L(x) = sum(r * y(x)) with dy = r.
TEST_P(RmsNorm, BackwardMatchesFiniteDifferences) {
  if (fmt() != Format::F32) GTEST_SKIP() << "the differences are taken in fp32";
  const float h = 1e-2f;
  for (uint32_t cols : {5u, 64u, 300u}) {
    SCOPED_TRACE(::testing::Message() << rows() << " x " << cols);
    const size_t n = size_t(rows()) * cols;
    // |x| in [1, 3): every row's rms is at least 1, so the step is small
    // against it.
    std::vector<float> x = random_values(n, 1, 3, Format::F32), w = random_values(cols, 0.5f, 1.5f, Format::F32),
                       r = random_values(n, -1, 1, Format::F32), v = random_values(n, -1, 1, Format::F32);
    for (size_t i = 0; i < n; i += 2) x[i] = -x[i];
    std::vector<float> xp(n), xm(n);
    for (size_t i = 0; i < n; ++i) xp[i] = x[i] + h * v[i], xm[i] = x[i] - h * v[i];
    double size = 0;  // sum |r y| of the evaluations, which their roundings scale with
    auto loss = [&](const std::vector<float>& at) {
      const std::vector<float> y = run_rms(at, w, r, cols, 1e-6f).y;
      double l = 0;
      for (size_t i = 0; i < n; ++i) l += double(r[i]) * y[i], size += std::abs(double(r[i]) * y[i]);
      return l;
    };
    const double fd = loss(xp) - loss(xm);
    const std::vector<float> dx = run_rms(x, w, r, cols, 1e-6f).dx;
    double dot = 0, dx_norm = 0, step_norm = 0;
    for (size_t i = 0; i < n; ++i) {
      const double step = double(xp[i]) - xm[i];
      dot += dx[i] * step;
      dx_norm += double(dx[i]) * dx[i];
      step_norm += step * step;
    }
    // Against |dx| |step|: truncation, the central difference's third-order
    // term, about (h |v|)^2 / rms^2 times a small constant, rms >= 1 here:
    // 10 h^2 = 1e-3; each forward's roundings, at most 32 fp32 ulps of
    // every y (forward_bound's count with room), summed without
    // cancelling; the backward's, 1e-6 of |dx| (dx_bound). A dx that takes
    // LayerNorm's mean_c(g) off as well errs by about 1 / sqrt(cols) here,
    // one without xhat mean_c(g xhat) by order 1.
    const double scale = std::sqrt(dx_norm * step_norm);
    const double rel = 10 * h * h + 32 * 0x1p-24 * size / scale + 1e-6;
    EXPECT_LE(std::abs(dot - fd) / scale, rel) << "<dx, step> " << dot << ", central difference " << fd;
  }
}

// At a real model's hidden sizes: Qwen2.5-0.5B's 896, Llama 3 8B's 4,096
// (the longest row one invocation of a CPU driver takes alone, row_plan's
// kThreadMaxCols) and 5,120 (Llama 2 13B's: past it, one workgroup per
// row); 33 rows, and 1,030 for two of the weight gradient's 1,024-row chunks.
constexpr uint32_t kHiddenCols[] = {896, 4096, 5120};

class RmsNormRealSize : public RmsNorm {
 protected:
  RmsNormRealSize() { cols_ = kHiddenCols; }
};

TEST_P(RmsNormRealSize, ForwardAndBackward) { expect_forward_and_backward(); }

INSTANTIATE_TEST_SUITE_P(RealSize, RmsNormRealSize,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::Values(33u, 1030u)),
                         format_size_name);

INSTANTIATE_TEST_SUITE_P(Shaders, LayerNorm, all_formats_and_sizes(), format_size_name);
INSTANTIATE_TEST_SUITE_P(Shaders, RmsNorm, all_formats_and_sizes(), format_size_name);
INSTANTIATE_TEST_SUITE_P(Shaders, LayerNormFp32,
                         ::testing::Combine(::testing::Values(Format::F32), ::testing::ValuesIn(kSizes)),
                         format_size_name);

}  // namespace
}  // namespace vkamp::test
