// BatchNorm over the rows of a rows x c matrix (ops/batch_norm.hpp) against
// a double reference on fresh random inputs, in every storage format: the
// batch statistics, the forward, the column sums, dweight/dbias and dx, at
// every awkward row count (kSizes: 1, where the variance is 0, y = bias and
// dx = 0; 7, 33, 127 and 1000, none a multiple of a workgroup), with
// c = 1, 3, 16 and 65 channels; 70,001 rows (many chunks of rows); x around
// 1000, where E[x^2] - E[x]^2 would cancel; an inf or NaN in x making its
// channel's column NaN (never hidden); the same bits on every run; the
// gradients against central differences of the reference's loss
// sum(y * g); and the running statistics' commit: folded in micro-batch
// order, n = 1, and a skipped step leaving every running buffer's bits.
//
// The bounds are an error model of the shaders' roundings, per element, in
// the ErrorBudget form (support/guarded.hpp): a value rounded to the
// storage format errs by at most u_fmt (|v| + its smallest normal: the
// subnormal spacing, or the whole value where a driver flushes), and the
// fp32 arithmetic before it by u_f32 times the magnitudes it went through,
// each counted once per rounding step, with sqrt(terms + 1) for an fp32 sum
// of many terms (the random walk of its roundings, as test_gemm.cpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "support/cases.hpp"
#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "vkamp/error.hpp"
#include "vkamp/ops/batch_norm.hpp"
#include "vkamp/sequence.hpp"
#include "vkamp/train/gpu_state.hpp"

namespace vkamp::test {
namespace {

constexpr uint32_t kChannels[] = {1, 3, 16, 65};

struct Inputs {
  std::vector<float> x, weight, bias, dy;  // x, dy in the format; weight, bias fp32
};

// Everything per channel is indexed [ch]; per element [r * c + ch].
struct Reference {
  std::vector<double> mean, var, y, sum_dy, sum_dy_xhat, dx;
};

// From the definitions, in double: two-pass mean and biased variance,
// xhat = (x - mean) / sqrt(var + eps), y = xhat w + b, and the gradients of
// L = sum(y * dy): dbias = sum dy, dweight = sum dy xhat,
// dx = w rstd (dy - mean(dy) - xhat mean(dy xhat)).
Reference reference(const Inputs& in, uint32_t rows, uint32_t c) {
  Reference ref;
  ref.mean.assign(c, 0.0);
  ref.var.assign(c, 0.0);
  ref.sum_dy.assign(c, 0.0);
  ref.sum_dy_xhat.assign(c, 0.0);
  ref.y.resize(in.x.size());
  ref.dx.resize(in.x.size());
  const double eps = ops::kBatchNormEps;  // the float the shaders add, widened exactly
  for (uint32_t ch = 0; ch < c; ++ch) {
    double mean = 0, var = 0;
    for (uint32_t r = 0; r < rows; ++r) mean += in.x[size_t(r) * c + ch];
    mean /= rows;
    for (uint32_t r = 0; r < rows; ++r) var += (in.x[size_t(r) * c + ch] - mean) * (in.x[size_t(r) * c + ch] - mean);
    var /= rows;
    const double rstd = 1 / std::sqrt(var + eps);
    double s1 = 0, s2 = 0;
    for (uint32_t r = 0; r < rows; ++r) {
      size_t i = size_t(r) * c + ch;
      double xhat = (in.x[i] - mean) * rstd;
      ref.y[i] = xhat * in.weight[ch] + in.bias[ch];
      s1 += in.dy[i];
      s2 += in.dy[i] * xhat;
    }
    for (uint32_t r = 0; r < rows; ++r) {
      size_t i = size_t(r) * c + ch;
      double xhat = (in.x[i] - mean) * rstd;
      ref.dx[i] = in.weight[ch] * rstd * (in.dy[i] - s1 / rows - xhat * s2 / rows);
    }
    ref.mean[ch] = mean;
    ref.var[ch] = var;
    ref.sum_dy[ch] = s1;
    ref.sum_dy_xhat[ch] = s2;
  }
  return ref;
}

// The error model of the shaders (batch_norm_stats/merge, batch_norm,
// batch_norm_grad_sums, batch_norm_param_grad, batch_norm_grad), in units
// of u = 2^-24 (an fp32 rounding of v errs by at most u |v|):
//  - mean: the chunks' corrected sums and the merge round |mean| about 3
//    times and sum the deviations d = x - mean with a random walk:
//    3 |mean| + (sqrt(rows + 1) + 2) mean|d|. Far from zero the 3 |mean|
//    dominates: the fp32 mean cannot be nearer than half an ulp of 1000.
//  - var, relative: the sum of d^2, the correction, the chunks' merge and
//    the division: rows + 6, the worst case of an fp32 sum of rows
//    same-signed terms, not the random walk: a 16-bit x near 1000 takes a
//    handful of values, so the d^2 repeat and their roundings need not
//    average out (bf16 at 1000 rows erred by 128 u); var + eps one more.
//  - rstd, relative: half var + eps's, plus inversesqrt's 2 ulps (Vulkan).
//  - xhat = (x - mean) rstd: rstd (mean's error + the subtraction's
//    |d|) + |xhat| (rstd's + the product's 1).
// Each output's budget then follows its shader's expression below.
struct ErrorModel {
  std::vector<double> mean, rstd_rel, xhat;  // mean [ch], rstd_rel [ch], xhat [element]
};

ErrorModel error_model(const Inputs& in, const Reference& ref, uint32_t rows, uint32_t c) {
  ErrorModel m;
  m.mean.resize(c);
  m.rstd_rel.resize(c);
  m.xhat.resize(in.x.size());
  const double walk = std::sqrt(rows + 1.0), eps = ops::kBatchNormEps;
  for (uint32_t ch = 0; ch < c; ++ch) {
    double mad = 0;
    for (uint32_t r = 0; r < rows; ++r) mad += std::abs(in.x[size_t(r) * c + ch] - ref.mean[ch]) / rows;
    m.mean[ch] = 3 * std::abs(ref.mean[ch]) + (walk + 2) * mad;
    const double var_eps_rel = (rows + 6.0) * ref.var[ch] / (ref.var[ch] + eps) + 1;
    m.rstd_rel[ch] = var_eps_rel / 2 + 2;
    const double rstd = 1 / std::sqrt(ref.var[ch] + eps);
    for (uint32_t r = 0; r < rows; ++r) {
      size_t i = size_t(r) * c + ch;
      double d = in.x[i] - ref.mean[ch];
      m.xhat[i] = rstd * (m.mean[ch] + std::abs(d)) + std::abs(d * rstd) * (m.rstd_rel[ch] + 1);
    }
  }
  return m;
}

struct Result {
  std::vector<float> mean, var, y, sum_dy, sum_dy_xhat, dx, dweight, dbias;
};

// The gradients a run adds to (BackwardAccumulates); none: overwritten.
struct Old {
  std::vector<float> dx, dweight, dbias;
};

// The whole op on the device in one recording: statistics into one stats
// block whose var half starts at byte 4c (any c: the ops bind fp32 operands
// from an aligned base), the forward, the sums, the parameter gradients and
// dx. Every output poisoned and guarded.
Result run(Format f, const Inputs& in, uint32_t rows, uint32_t c, const Old* old = nullptr) {
  const size_t n = size_t(rows) * c;
  Buffer x = guarded_input(f, in.x), dy = guarded_input(f, in.dy);
  Buffer w = guarded_input(Format::F32, in.weight), b = guarded_input(Format::F32, in.bias);
  Buffer stats = guarded_output(Format::F32, 2 * c), sums = guarded_output(Format::F32, 2 * c);
  Buffer y = guarded_output(f, n), dx = guarded_output(f, n, old ? &old->dx : nullptr);
  Buffer dw = guarded_output(f, c, old ? &old->dweight : nullptr), db = guarded_output(f, c, old ? &old->dbias : nullptr);
  const BufferView mean(stats, 0, c * sizeof(float)), var(stats, c * sizeof(float), c * sizeof(float));
  run_once([&](Sequence& seq) {
    ops::batch_norm_statistics(seq, f, x, stats, rows, c);
    ops::batch_norm_forward(seq, f, x, mean, var, w, b, y, rows, c);
    ops::batch_norm_grad_sums(seq, f, x, mean, var, dy, sums, rows, c);
    ops::batch_norm_param_grads(seq, f, sums, dw, db, c, old != nullptr, old != nullptr);
    ops::batch_norm_backward_input(seq, f, x, mean, var, w, dy, sums, dx, rows, c, old != nullptr);
  });
  Result out;
  std::vector<float> st = guarded_result(stats, Format::F32, 2 * c, "stats");
  out.mean.assign(st.begin(), st.begin() + c);
  out.var.assign(st.begin() + c, st.end());
  std::vector<float> s = guarded_result(sums, Format::F32, 2 * c, "sums");
  out.sum_dy.assign(s.begin(), s.begin() + c);
  out.sum_dy_xhat.assign(s.begin() + c, s.end());
  out.y = guarded_result(y, f, n, "y");
  out.dx = guarded_result(dx, f, n, "dx");
  out.dweight = guarded_result(dw, f, c, "dweight");
  out.dbias = guarded_result(db, f, c, "dbias");
  return out;
}

// Every output against the reference, under the error model.
void expect_close(Format f, const Inputs& in, const Result& out, const Reference& ref, uint32_t rows, uint32_t c,
                  const Old* old = nullptr) {
  const ErrorModel m = error_model(in, ref, rows, c);
  const double walk = std::sqrt(rows + 1.0);
  std::vector<double> sum_abs_dy(c, 0.0), sum_abs_dy_xhat(c, 0.0), sum_dy_xhat_err(c, 0.0);
  for (size_t i = 0; i < in.x.size(); ++i) {
    const uint32_t ch = uint32_t(i % c);
    const double xhat = (in.x[i] - ref.mean[ch]) / std::sqrt(ref.var[ch] + ops::kBatchNormEps);
    sum_abs_dy[ch] += std::abs(in.dy[i]);
    sum_abs_dy_xhat[ch] += std::abs(in.dy[i] * xhat);
    sum_dy_xhat_err[ch] += std::abs(in.dy[i]) * m.xhat[i];
  }

  // Statistics, fp32 only: mean and var as the model says.
  ErrorBudget mean_budget(Format::F32), var_budget(Format::F32);
  for (uint32_t ch = 0; ch < c; ++ch) {
    mean_budget.add(ref.mean[ch], 0, m.mean[ch]);
    var_budget.add(ref.var[ch], 0, (rows + 6.0) * ref.var[ch]);
  }
  EXPECT_TRUE(close_to(out.mean, ref.mean, mean_budget.bound())) << "mean";
  EXPECT_TRUE(close_to(out.var, ref.var, var_budget.bound())) << "var";

  // y = xhat w + b: w times xhat's error, the product and the sum (2),
  // then one rounding to the format.
  ErrorBudget y_budget(f);
  for (size_t i = 0; i < in.x.size(); ++i) {
    const uint32_t ch = uint32_t(i % c);
    const double wx = std::abs(ref.y[i] - in.bias[ch]);
    y_budget.add(ref.y[i], y_budget.rounded(ref.y[i]),
                 std::abs(in.weight[ch]) * m.xhat[i] + wx + std::abs(ref.y[i]));
  }
  EXPECT_TRUE(close_to(out.y, ref.y, y_budget.bound())) << "y";

  // The column sums, fp32: sum dy exact terms (random walk); sum dy xhat
  // also carries each xhat's error.
  ErrorBudget s1_budget(Format::F32), s2_budget(Format::F32);
  for (uint32_t ch = 0; ch < c; ++ch) {
    s1_budget.add(ref.sum_dy[ch], 0, walk * sum_abs_dy[ch]);
    s2_budget.add(ref.sum_dy_xhat[ch], 0, walk * sum_abs_dy_xhat[ch] + sum_dy_xhat_err[ch]);
  }
  EXPECT_TRUE(close_to(out.sum_dy, ref.sum_dy, s1_budget.bound())) << "sum dy";
  EXPECT_TRUE(close_to(out.sum_dy_xhat, ref.sum_dy_xhat, s2_budget.bound())) << "sum dy xhat";

  // dbias, dweight: the sums, plus the old value and one fp32 add when
  // accumulating, then one rounding to the format (of the total).
  std::vector<double> dw(c), db(c);
  ErrorBudget dw_budget(f), db_budget(f);
  for (uint32_t ch = 0; ch < c; ++ch) {
    db[ch] = ref.sum_dy[ch] + (old ? old->dbias[ch] : 0.0);
    dw[ch] = ref.sum_dy_xhat[ch] + (old ? old->dweight[ch] : 0.0);
    db_budget.add(db[ch], db_budget.rounded(db[ch]), walk * sum_abs_dy[ch] + (old ? std::abs(db[ch]) : 0.0));
    dw_budget.add(dw[ch], dw_budget.rounded(dw[ch]),
                  walk * sum_abs_dy_xhat[ch] + sum_dy_xhat_err[ch] + (old ? std::abs(dw[ch]) : 0.0));
  }
  EXPECT_TRUE(close_to(out.dbias, db, db_budget.bound())) << "dbias";
  EXPECT_TRUE(close_to(out.dweight, dw, dw_budget.bound())) << "dweight";

  // dx = w rstd (dy - S1 - xhat S2) with S1 = sum dy / N, S2 = sum dy xhat / N:
  // S1 and S2 carry their sums' errors over N plus 2 roundings (1/N, the
  // product); A = dy - S1 - xhat S2 adds S2 times xhat's error and 3
  // roundings (the product, two subtractions); then w rstd A: rstd's
  // relative error and 2 products; when accumulating, |old| and one add;
  // one rounding to the format.
  std::vector<double> dx(in.x.size());
  ErrorBudget dx_budget(f);
  for (size_t i = 0; i < in.x.size(); ++i) {
    const uint32_t ch = uint32_t(i % c);
    const double rstd = 1 / std::sqrt(ref.var[ch] + ops::kBatchNormEps);
    const double xhat = (in.x[i] - ref.mean[ch]) * rstd;
    const double s1 = ref.sum_dy[ch] / rows, s2 = ref.sum_dy_xhat[ch] / rows;
    const double e1 = walk * sum_abs_dy[ch] / rows + 2 * std::abs(s1);
    const double e2 = (walk * sum_abs_dy_xhat[ch] + sum_dy_xhat_err[ch]) / rows + 2 * std::abs(s2);
    const double a = in.dy[i] - s1 - xhat * s2;
    const double ea = e1 + std::abs(xhat) * e2 + std::abs(s2) * m.xhat[i] + std::abs(xhat * s2) +
                      std::abs(in.dy[i] - s1) + std::abs(a);
    const double wr = std::abs(in.weight[ch]) * rstd;
    dx[i] = ref.dx[i] + (old ? old->dx[i] : 0.0);
    dx_budget.add(dx[i], dx_budget.rounded(dx[i]),
                  wr * ea + std::abs(ref.dx[i]) * (m.rstd_rel[ch] + 2) + (old ? std::abs(dx[i]) : 0.0));
  }
  EXPECT_TRUE(close_to(out.dx, dx, dx_budget.bound())) << "dx";
}

class BatchNorm : public MatrixShaderTest {
 protected:
  // x around `offset`, weight of either sign, dy with a positive mean (so
  // that sum dy does not cancel to nothing), x and dy rounded to the format.
  Inputs inputs(uint32_t c, float offset = 0, uint32_t rows = 0, float dy_max = 3) {
    size_t n = size_t(rows ? rows : this->rows()) * c;
    return {random_values(n, offset - 4, offset + 4, fmt()), random_values(c, -2, 2, Format::F32),
            random_values(c, -1, 1, Format::F32), random_values(n, -1, dy_max, fmt())};
  }

  template <class Check>
  void for_each_channels(Check check) {
    for (uint32_t c : kChannels) {
      SCOPED_TRACE(::testing::Message() << rows() << " rows x " << c << " channels");
      check(c);
    }
  }
};

TEST_P(BatchNorm, ForwardAndBackward) {
  for_each_channels([&](uint32_t c) {
    Inputs in = inputs(c);
    expect_close(fmt(), in, run(fmt(), in, rows(), c), reference(in, rows(), c), rows(), c);
  });
}

TEST_P(BatchNorm, BackwardAccumulates) {
  for_each_channels([&](uint32_t c) {
    Inputs in = inputs(c);
    Old old{random_values(in.x.size(), -1, 1, fmt()), random_values(c, 0, 4, fmt()), random_values(c, 0, 4, fmt())};
    expect_close(fmt(), in, run(fmt(), in, rows(), c, &old), reference(in, rows(), c), rows(), c, &old);
  });
}

// x in [996, 1004): E[x^2] ~ 1e6 has an fp32 ulp of 0.06 against a
// variance of 5.3, so a one-pass variance would be off by whole percents;
// the two-pass one keeps the model's bound, whose 3 |mean| term is the
// fp32 mean's own rounding (half an ulp of 1000 is 3e-5, 1e-5 of the spread).
// (In the 16-bit formats x takes the few values the format has there.)
TEST_P(BatchNorm, FarFromZero) {
  for_each_channels([&](uint32_t c) {
    Inputs in = inputs(c, 1000);
    expect_close(fmt(), in, run(fmt(), in, rows(), c), reference(in, rows(), c), rows(), c);
  });
}

// Fixed chunks, fixed merge order, no atomics.
TEST_P(BatchNorm, SameBitsEveryRun) {
  for_each_channels([&](uint32_t c) {
    Inputs in = inputs(c);
    Result a = run(fmt(), in, rows(), c), b = run(fmt(), in, rows(), c);
    for (auto f : {&Result::mean, &Result::var, &Result::y, &Result::sum_dy, &Result::sum_dy_xhat, &Result::dx,
                   &Result::dweight, &Result::dbias})
      EXPECT_EQ(0, std::memcmp((a.*f).data(), (b.*f).data(), (a.*f).size() * sizeof(float)));
  });
}

// One inf or NaN in x makes its channel's mean or variance NaN, so its
// whole column of y and dx, and its dweight, are NaN, as in the reference
// (and PyTorch); the other channels, and every dbias, are untouched.
TEST_P(BatchNorm, NonFiniteInputPoisonsItsChannel) {
  for (float special : {kInf, -kInf, kNan}) {
    for_each_channels([&](uint32_t c) {
      SCOPED_TRACE(::testing::Message() << "x special " << special);
      Inputs in = inputs(c);
      const uint32_t ch = std::uniform_int_distribution<uint32_t>(0, c - 1)(rng());
      const uint32_t r = std::uniform_int_distribution<uint32_t>(0, rows() - 1)(rng());
      in.x[size_t(r) * c + ch] = special;
      Reference ref = reference(in, rows(), c);
      // The reference's mean is +-inf where x holds one inf; the shaders'
      // two-pass sums make it NaN (inf - inf): either way non-finite, and
      // the variance is NaN in both.
      for (double& m : ref.mean)
        if (std::isinf(m)) m = std::nan("");
      for (uint32_t k = 0; k < rows(); ++k) ASSERT_TRUE(std::isnan(ref.y[size_t(k) * c + ch]));
      Result out = run(fmt(), in, rows(), c);
      for (uint32_t k = 0; k < rows(); ++k)
        EXPECT_TRUE(std::isnan(out.y[size_t(k) * c + ch])) << "row " << k << ": y " << out.y[size_t(k) * c + ch];
      expect_close(fmt(), in, out, ref, rows(), c);
    });
  }
}

// Many chunks of rows (70,001: 69 of lavapipe's 1024-row chunks, the last
// one short; a GPU's ~1000 chunks of 69), with 3 channels: the size
// parameter is the rows.
class BatchNormManyRows : public BatchNorm {};

TEST_P(BatchNormManyRows, ForwardAndBackward) {
  const uint32_t c = 3;
  for (float offset : {0.0f, 1000.0f}) {
    SCOPED_TRACE(::testing::Message() << "offset " << offset);
    // dy's mean 0.25: sum dy ~ 17,500 stays inside fp16's range.
    Inputs in = inputs(c, offset, 0, 1.5f);
    expect_close(fmt(), in, run(fmt(), in, rows(), c), reference(in, rows(), c), rows(), c);
  }
}

INSTANTIATE_TEST_SUITE_P(Shaders, BatchNorm, all_formats_and_sizes(), format_size_name);
INSTANTIATE_TEST_SUITE_P(Shaders, BatchNormManyRows,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::Values(70001u)),
                         format_size_name);

// The reference's gradients against central differences of its own loss
// L = sum(y * g) in double, and the device's fp32 gradients against those
// differences too (the error model's bound; the differences err far below it).
class BatchNormFiniteDifferences : public GpuTest {};

TEST_F(BatchNormFiniteDifferences, GradientsMatch) {
  for (uint32_t rows : {2u, 7u, 33u}) {
    const uint32_t c = 3;
    SCOPED_TRACE(::testing::Message() << rows << " rows");
    const size_t n = size_t(rows) * c;
    Inputs in{random_values(n, -4, 4, Format::F32), random_values(c, -2, 2, Format::F32),
              random_values(c, -1, 1, Format::F32), random_values(n, -1, 3, Format::F32)};
    const Reference ref = reference(in, rows, c);
    // L from doubles: the inputs are perturbed in double, off the float grid.
    auto loss = [&](const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& b) {
      double l = 0;
      for (uint32_t ch = 0; ch < c; ++ch) {
        double mean = 0, var = 0;
        for (uint32_t r = 0; r < rows; ++r) mean += x[size_t(r) * c + ch] / rows;
        for (uint32_t r = 0; r < rows; ++r) var += std::pow(x[size_t(r) * c + ch] - mean, 2) / rows;
        for (uint32_t r = 0; r < rows; ++r) {
          size_t i = size_t(r) * c + ch;
          l += in.dy[i] * ((x[i] - mean) / std::sqrt(var + double(ops::kBatchNormEps)) * w[ch] + b[ch]);
        }
      }
      return l;
    };
    std::vector<double> x(in.x.begin(), in.x.end()), w(in.weight.begin(), in.weight.end()),
        b(in.bias.begin(), in.bias.end());
    // Central differences at h and h / 2, combined by Richardson's
    // extrapolation (4 D(h/2) - D(h)) / 3: truncation O((h / sigma)^4),
    // where a plain difference's O((h / sigma)^2) was too coarse for two
    // rows that lie close (sigma small, derivatives large).
    const double h = 1e-4;
    auto central = [&](std::vector<double>& v, size_t i) {
      const double keep = v[i];
      auto diff = [&](double step) {
        v[i] = keep + step;
        double up = loss(x, w, b);
        v[i] = keep - step;
        double down = loss(x, w, b);
        v[i] = keep;
        return (up - down) / (2 * step);
      };
      return (4 * diff(h / 2) - diff(h)) / 3;
    };
    std::vector<double> fd_dx(n), fd_dw(c), fd_db(c);
    for (size_t i = 0; i < n; ++i) fd_dx[i] = central(x, i);
    for (uint32_t ch = 0; ch < c; ++ch) {
      fd_dw[ch] = central(w, ch);
      fd_db[ch] = central(b, ch);
    }
    // The reference against the differences: truncation O((h / sigma)^4) and
    // cancellation ~1e-16 |L| / h, both far below 1e-7 of these gradients' scale.
    auto near = [](const std::vector<double>& a, const std::vector<double>& fd, const char* what) {
      double scale = 0;
      for (double v : fd) scale = std::max(scale, std::abs(v));
      for (size_t i = 0; i < a.size(); ++i)
        EXPECT_NEAR(a[i], fd[i], 1e-7 * std::max(scale, 1.0)) << what << " " << i;
    };
    near(ref.dx, fd_dx, "dx");
    near(ref.sum_dy_xhat, fd_dw, "dweight");
    near(ref.sum_dy, fd_db, "dbias");
    // The device against the differences, under the model's bounds.
    Reference from_fd = ref;
    from_fd.dx = fd_dx;
    from_fd.sum_dy_xhat = fd_dw;
    from_fd.sum_dy = fd_db;
    expect_close(Format::F32, in, run(Format::F32, in, rows, c), from_fd, rows, c);
  }
}

// Misuse names the op and the operand: a buffer too small, no channels or
// rows, an fp32 operand off a 4-byte boundary.
class BatchNormChecks : public GpuTest {};

TEST_F(BatchNormChecks, BadArgumentsThrowNamingTheOperand) {
  auto message = [](auto&& call) -> std::string {
    try {
      call();
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  const uint32_t rows = 4, c = 3;
  Buffer x = upload(ctx(), Format::F32, std::vector<float>(rows * c, 1.0f));
  Buffer small = upload(ctx(), Format::F32, std::vector<float>(c, 1.0f));
  Buffer stats = upload(ctx(), Format::F32, std::vector<float>(2 * c + 2, 1.0f));
  Sequence seq(ctx());
  seq.begin();
  EXPECT_NE(message([&] { ops::batch_norm_forward(seq, Format::F32, x, small, small, small, small, small, rows, c); })
                .find("batch_norm_forward: y holds 12 bytes, needs 48"),
            std::string::npos);
  EXPECT_NE(message([&] { ops::batch_norm_statistics(seq, Format::F32, x, small, rows, c); })
                .find("batch_norm_statistics: stats holds 12 bytes, needs 24"),
            std::string::npos);
  EXPECT_NE(message([&] { ops::batch_norm_statistics(seq, Format::F32, x, stats, rows, 0); })
                .find("batch_norm_statistics: c must be at least 1"),
            std::string::npos);
  EXPECT_NE(message([&] { ops::batch_norm_statistics(seq, Format::F32, x, stats, 0, c); })
                .find("batch_norm_statistics: rows must be at least 1"),
            std::string::npos);
  EXPECT_NE(message([&] { ops::batch_norm_statistics(seq, Format::F32, x, BufferView(stats, 2, 2 * c * 4), rows, c); })
                .find("batch_norm_statistics: stats starts at byte 2, not a multiple of 4"),
            std::string::npos);
  EXPECT_NE(message([&] { ops::batch_norm_commit(seq, stats, stats, small, small, small, c, 0, rows); })
                .find("batch_norm_commit: micro_batches must be at least 1"),
            std::string::npos);
  seq.end();
}

// batch_norm_commit: the running statistics after the optimizer, predicated
// on TrainState::apply.
class BatchNormCommit : public GpuTest {
 protected:
  Buffer state(bool apply) {
    train::TrainState st{};
    st.apply = apply ? 1u : 0u;
    Buffer b(ctx(), sizeof st);
    b.write(&st, sizeof st);
    return b;
  }

  struct Running {
    std::vector<float> mean, var, tracked;
  };

  // Commits `pending` (micro_batches blocks) into `before`, through views
  // that start `pad` floats into their buffers (any offset must do).
  Running commit(bool apply, const std::vector<float>& pending, const Running& before, uint32_t c,
                 uint32_t micro_batches, uint32_t rows, uint32_t pad = 0) {
    auto padded = [&](const std::vector<float>& v) {
      std::vector<float> p(pad, 7.0f);
      p.insert(p.end(), v.begin(), v.end());
      return p;
    };
    Buffer st = state(apply);
    Buffer pend = guarded_input(Format::F32, padded(pending));
    Buffer m = guarded_output(Format::F32, pad + c, nullptr), v = guarded_output(Format::F32, pad + c, nullptr);
    Buffer t = guarded_output(Format::F32, pad + 1, nullptr);
    std::vector<float> pm = padded(before.mean), pv = padded(before.var), pt = padded(before.tracked);
    m.write(pm.data(), pm.size() * 4);
    v.write(pv.data(), pv.size() * 4);
    t.write(pt.data(), pt.size() * 4);
    const size_t off = pad * sizeof(float);
    run_once([&](Sequence& seq) {
      ops::batch_norm_commit(seq, st, BufferView(pend, off, pending.size() * 4), BufferView(m, off, c * 4),
                             BufferView(v, off, c * 4), BufferView(t, off, 4), c, micro_batches, rows);
    });
    Running out{guarded_result(m, Format::F32, pad + c, "running_mean"),
                guarded_result(v, Format::F32, pad + c, "running_var"),
                guarded_result(t, Format::F32, pad + 1, "num_batches_tracked")};
    for (auto* r : {&out.mean, &out.var, &out.tracked}) {
      for (uint32_t i = 0; i < pad; ++i) EXPECT_EQ((*r)[i], 7.0f) << "written before the view at " << i;
      r->erase(r->begin(), r->begin() + pad);
    }
    return out;
  }

  // PyTorch's update in double, block by block: the unbiased variance
  // var * n / (n - 1) (n = 1: var as is).
  static std::vector<double> fold(std::vector<double> running, const std::vector<double>& blocks, uint32_t c,
                                  uint32_t half, uint32_t rows) {
    const double m = ops::kBatchNormMomentum, unbias = rows > 1 ? double(rows) / (rows - 1) : 1.0;
    for (size_t k = 0; k * 2 * c < blocks.size(); ++k)
      for (uint32_t ch = 0; ch < c; ++ch)
        running[ch] = (1 - m) * running[ch] + m * blocks[k * 2 * c + half * c + ch] * (half ? unbias : 1.0);
    return running;
  }

  // Each block rounds 4 times (1 - m, two products, the sum; the variance
  // 2 more: n / (n - 1) and its product) over magnitudes below the largest
  // value involved, and earlier errors shrink by 1 - m: 6 M of that
  // largest value, in fp32.
  static double fold_bound(const std::vector<double>& ref, double largest, uint32_t micro_batches) {
    ErrorBudget budget(Format::F32);
    for (double r : ref) budget.add(r, 0, 6.0 * micro_batches * largest);
    return budget.bound();
  }
};

TEST_F(BatchNormCommit, AppliedStepFoldsEveryBlockInOrder) {
  for (uint32_t c : {1u, 3u, 16u}) {
    for (uint32_t micro_batches : {1u, 3u}) {
      for (uint32_t rows : {1u, 2u, 50u}) {
        SCOPED_TRACE(::testing::Message() << c << " channels, " << micro_batches << " blocks of " << rows << " rows");
        std::vector<float> pending;
        for (uint32_t k = 0; k < micro_batches; ++k) {
          // Means far apart per block, so that another order gives other values.
          std::vector<float> mean = random_values(c, -2.0f + 3 * k, 2.0f + 3 * k, Format::F32);
          std::vector<float> var = random_values(c, 0.1f, 4, Format::F32);
          pending.insert(pending.end(), mean.begin(), mean.end());
          pending.insert(pending.end(), var.begin(), var.end());
        }
        Running before{random_values(c, -1, 1, Format::F32), random_values(c, 0.5f, 2, Format::F32), {5.0f}};
        for (uint32_t pad : {0u, 3u}) {
          Running after = commit(true, pending, before, c, micro_batches, rows, pad);
          std::vector<double> blocks(pending.begin(), pending.end());
          std::vector<double> mean = fold({before.mean.begin(), before.mean.end()}, blocks, c, 0, rows);
          std::vector<double> var = fold({before.var.begin(), before.var.end()}, blocks, c, 1, rows);
          EXPECT_TRUE(close_to(after.mean, mean, fold_bound(mean, 3.0 * micro_batches + 2, micro_batches)));
          EXPECT_TRUE(close_to(after.var, var, fold_bound(var, 4.0 * 50 / 49 + 2, micro_batches)));
          EXPECT_EQ(after.tracked[0], 5.0f + micro_batches);
        }
      }
    }
  }
}

TEST_F(BatchNormCommit, SkippedStepWritesNothing) {
  const uint32_t c = 16, micro_batches = 2;
  std::vector<float> pending = random_values(2 * c * micro_batches, 0.1f, 3, Format::F32);
  pending[5] = kNan;  // what an overflowing batch leaves: it must not get in
  pending[c + 2] = kInf;
  Running before{random_values(c, -1, 1, Format::F32), random_values(c, 0.5f, 2, Format::F32), {12.0f}};
  Running after = commit(false, pending, before, c, micro_batches, 64);
  EXPECT_EQ(0, std::memcmp(after.mean.data(), before.mean.data(), c * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(after.var.data(), before.var.data(), c * sizeof(float)));
  EXPECT_EQ(after.tracked[0], 12.0f);
}

// The training path end to end: each micro-batch's statistics written into
// its block of one pending buffer (block k at float 2 c k: for c = 3 no
// block but the first starts on an aligned offset), then one commit,
// against PyTorch's sequence of M forward passes in double.
TEST_F(BatchNormCommit, MicroBatchStatisticsThenCommit) {
  const uint32_t c = 3, micro_batches = 4, rows = 37;
  std::vector<std::vector<float>> x;
  for (uint32_t k = 0; k < micro_batches; ++k) x.push_back(random_values(size_t(rows) * c, -1.0f + k, 3.0f + k, Format::F32));
  Running before{std::vector<float>(c, 0.0f), std::vector<float>(c, 1.0f), {0.0f}};  // PyTorch's initial buffers
  Buffer st = state(true);
  Buffer pending = guarded_output(Format::F32, 2 * c * micro_batches);
  Buffer m = upload(ctx(), Format::F32, before.mean), v = upload(ctx(), Format::F32, before.var);
  Buffer t = upload(ctx(), Format::F32, before.tracked);
  std::vector<Buffer> xb;
  for (auto& xs : x) xb.push_back(upload(ctx(), Format::F32, xs));
  run_once([&](Sequence& seq) {
    for (uint32_t k = 0; k < micro_batches; ++k)
      ops::batch_norm_statistics(seq, Format::F32, xb[k], BufferView(pending, k * 2 * c * 4, 2 * c * 4), rows, c);
    ops::batch_norm_commit(seq, st, pending, m, v, t, c, micro_batches, rows);
  });
  guarded_result(pending, Format::F32, 2 * c * micro_batches, "pending");
  std::vector<double> blocks;
  for (uint32_t k = 0; k < micro_batches; ++k) {
    Inputs in{x[k], std::vector<float>(c, 1.0f), std::vector<float>(c, 0.0f), std::vector<float>(x[k].size(), 0.0f)};
    Reference ref = reference(in, rows, c);
    blocks.insert(blocks.end(), ref.mean.begin(), ref.mean.end());
    blocks.insert(blocks.end(), ref.var.begin(), ref.var.end());
  }
  std::vector<double> mean = fold({before.mean.begin(), before.mean.end()}, blocks, c, 0, rows);
  std::vector<double> var = fold({before.var.begin(), before.var.end()}, blocks, c, 1, rows);
  // The statistics' own errors (a few fp32 ulps of |mean| and var, the
  // random walk over 37 rows: < 16 ulps) fold in with weight m < 1: add 16.
  const double largest = micro_batches + 3;
  EXPECT_TRUE(close_to(download(m, Format::F32, c), mean, fold_bound(mean, largest, micro_batches + 16)));
  EXPECT_TRUE(close_to(download(v, Format::F32, c), var, fold_bound(var, largest, micro_batches + 16)));
  EXPECT_EQ(download(t, Format::F32, 1)[0], float(micro_batches));
}

}  // namespace
}  // namespace vkamp::test
