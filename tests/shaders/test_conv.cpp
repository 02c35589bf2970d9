// conv2d (NHWC, im2col + GEMM): im2col, the forward y = conv(x, w) + b, the
// backward dw, db and dx (col2im of dY W), with and without accumulation,
// against double references written from the convolution's definition;
// inf/NaN from x, w, b and dy reaching exactly the outputs that depend on
// them; and every gradient against central differences of the fp32
// forward. Shapes are awkward on purpose: batch 1, odd sizes, channel
// counts that are not multiples of 4, kernels 1/3/5, strides 1/2, padding
// 0/1/2, windows made only of padding, inputs no window reaches.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "vkamp/error.hpp"
#include "vkamp/ops/conv.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

struct ConvShape {
  uint32_t n, h, w, c, oc, k, s, p;
};

constexpr ConvShape kShapes[] = {
    {1, 7, 9, 3, 6, 3, 2, 1},    // stride 2 with padding, odd sizes
    {2, 5, 5, 1, 1, 1, 1, 0},    // 1x1 kernel, one channel in and out
    {3, 9, 7, 7, 5, 5, 1, 2},    // "same" 5x5, 7 channels
    {1, 1, 1, 6, 7, 1, 1, 0},    // a single pixel
    {2, 8, 6, 6, 16, 5, 1, 0},   // LeNet conv2's channels, kernel as tall as the input is wide
    {1, 3, 3, 3, 2, 5, 2, 2},    // kernel larger than the input, padding makes it fit
    {1, 12, 11, 4, 3, 3, 2, 0},  // stride 2 that drops the last row and column
    {2, 6, 5, 3, 4, 1, 2, 0},    // stride 2 kernel 1: inputs no window reaches
    {1, 3, 4, 5, 2, 1, 1, 1},    // pad >= kernel: windows of padding only
    {4, 28, 28, 1, 6, 5, 1, 2},  // LeNet conv1 at batch 4: many workgroups
};

using FormatConv = std::tuple<Format, ConvShape>;

std::string shape_name(const ConvShape& s) {
  return "n" + std::to_string(s.n) + "_h" + std::to_string(s.h) + "w" + std::to_string(s.w) + "c" +
         std::to_string(s.c) + "_oc" + std::to_string(s.oc) + "_k" + std::to_string(s.k) + "s" +
         std::to_string(s.s) + "p" + std::to_string(s.p);
}

ops::Conv2d conv_of(const ConvShape& s) {
  ops::Conv2d c;
  c.batch = s.n;
  c.in_h = s.h;
  c.in_w = s.w;
  c.in_c = s.c;
  c.out_c = s.oc;
  c.kernel = s.k;
  c.stride = s.s;
  c.pad = s.p;
  return c;
}

// Calls tap(r, k, xi) for every output pixel r = (n, oy, ox), every patch
// position k = (ky, kx, ci), and the index xi of the input it reads (NHWC),
// or -1 where it reads padding: the definition of the convolution's input
// window, from the shape alone.
template <class Tap>
void for_each_tap(const ops::Conv2d& c, Tap tap) {
  const uint32_t oh = c.out_h(), ow = c.out_w();
  size_t r = 0;
  for (uint32_t n = 0; n < c.batch; ++n)
    for (uint32_t oy = 0; oy < oh; ++oy)
      for (uint32_t ox = 0; ox < ow; ++ox, ++r) {
        size_t k = 0;
        for (uint32_t ky = 0; ky < c.kernel; ++ky)
          for (uint32_t kx = 0; kx < c.kernel; ++kx)
            for (uint32_t ci = 0; ci < c.in_c; ++ci, ++k) {
              int64_t y = int64_t(oy) * c.stride + ky - c.pad, x = int64_t(ox) * c.stride + kx - c.pad;
              bool inside = y >= 0 && y < c.in_h && x >= 0 && x < c.in_w;
              tap(r, k, inside ? int64_t(((size_t(n) * c.in_h + y) * c.in_w + x) * c.in_c + ci) : int64_t(-1));
            }
      }
}

// Whether some window reads input element i.
std::vector<bool> covered(const ops::Conv2d& c) {
  std::vector<bool> cov(c.input_elements(), false);
  for_each_tap(c, [&](size_t, size_t, int64_t xi) {
    if (xi >= 0) cov[xi] = true;
  });
  return cov;
}

std::vector<float> ref_im2col(const ops::Conv2d& c, const std::vector<float>& x) {
  std::vector<float> col(c.col_elements());
  const size_t kk = c.col_cols();
  for_each_tap(c, [&](size_t r, size_t k, int64_t xi) { col[r * kk + k] = xi >= 0 ? x[xi] : 0.0f; });
  return col;
}

// A reference output with its error budget (see support/guarded.hpp).
struct Ref {
  std::vector<double> v;
  double bound = 0;
};

// y[r,o] = b[o] + sum_k x(r,k) w[o,k], x(r,k) = 0 on padding (so 0 * inf
// is NaN there, as for any zero input). The engine rounds the product sum
// to the format, then adds b in the arithmetic type and rounds again.
Ref ref_forward(Format fmt, const ops::Conv2d& c, const std::vector<float>& x, const std::vector<float>& w,
                const std::vector<float>& b) {
  const size_t kk = c.col_cols(), rows = c.col_rows();
  std::vector<double> sum(rows * c.out_c, 0.0), abs_sum(rows * c.out_c, 0.0);
  for_each_tap(c, [&](size_t r, size_t k, int64_t xi) {
    double xv = xi >= 0 ? double(x[xi]) : 0.0;
    for (uint32_t o = 0; o < c.out_c; ++o) {
      double t = xv * w[o * kk + k];
      sum[r * c.out_c + o] += t;
      abs_sum[r * c.out_c + o] += std::abs(t);
    }
  });
  Ref ref;
  ref.v.resize(sum.size());
  ErrorBudget budget(fmt);
  for (size_t i = 0; i < sum.size(); ++i) {
    double y = sum[i] + b[i % c.out_c];
    ref.v[i] = y;
    budget.add(y, budget.rounded(sum[i]) + budget.rounded(y), std::sqrt(kk + 1.0) * abs_sum[i] + std::abs(y));
  }
  ref.bound = budget.bound();
  return ref;
}

// dx[i] = sum over the taps that read x[i] of dcol(r,k) = sum_o dy[r,o] w[o,k].
// The engine rounds each dcol to the format, sums them in fp32, rounds again.
Ref ref_backward_input(Format fmt, const ops::Conv2d& c, const std::vector<float>& dy,
                       const std::vector<float>& w) {
  const size_t kk = c.col_cols(), n = c.input_elements();
  std::vector<double> dx(n, 0.0), fmt_mag(n, 0.0), f32_dcol(n, 0.0), abs_dcol(n, 0.0), taps(n, 0.0);
  ErrorBudget budget(fmt);
  for_each_tap(c, [&](size_t r, size_t k, int64_t xi) {
    if (xi < 0) return;
    double d = 0, a = 0;
    for (uint32_t o = 0; o < c.out_c; ++o) {
      double t = double(dy[r * c.out_c + o]) * w[o * kk + k];
      d += t;
      a += std::abs(t);
    }
    dx[xi] += d;
    fmt_mag[xi] += budget.rounded(d);
    f32_dcol[xi] += std::sqrt(c.out_c + 1.0) * a;
    abs_dcol[xi] += std::abs(d);
    taps[xi] += 1;
  });
  for (size_t i = 0; i < n; ++i)
    budget.add(dx[i], fmt_mag[i] + budget.rounded(dx[i]), f32_dcol[i] + std::sqrt(taps[i] + 1) * abs_dcol[i]);
  return {dx, budget.bound()};
}

// dw[o,k] = sum_r dy[r,o] x(r,k) (+ dw0[o,k]), one fp32 sum over the rows.
Ref ref_backward_weight(Format fmt, const ops::Conv2d& c, const std::vector<float>& dy,
                        const std::vector<float>& x, const std::vector<float>* dw0) {
  const size_t kk = c.col_cols(), rows = c.col_rows();
  std::vector<double> dw(c.weight_elements(), 0.0), abs_sum(dw.size(), 0.0);
  for_each_tap(c, [&](size_t r, size_t k, int64_t xi) {
    double xv = xi >= 0 ? double(x[xi]) : 0.0;
    for (uint32_t o = 0; o < c.out_c; ++o) {
      double t = double(dy[r * c.out_c + o]) * xv;
      dw[o * kk + k] += t;
      abs_sum[o * kk + k] += std::abs(t);
    }
  });
  ErrorBudget budget(fmt);
  for (size_t i = 0; i < dw.size(); ++i) {
    double init = dw0 ? double((*dw0)[i]) : 0.0;
    dw[i] += init;
    budget.add(dw[i], budget.rounded(dw[i]), std::sqrt(rows + 2.0) * (abs_sum[i] + std::abs(init)));
  }
  return {dw, budget.bound()};
}

// db[o] = sum_r dy[r,o] (+ db0[o]).
Ref ref_backward_bias(Format fmt, const ops::Conv2d& c, const std::vector<float>& dy,
                      const std::vector<float>* db0) {
  const size_t rows = c.col_rows();
  std::vector<double> db(c.out_c, 0.0), abs_sum(c.out_c, 0.0);
  for (size_t r = 0; r < rows; ++r)
    for (uint32_t o = 0; o < c.out_c; ++o) {
      db[o] += dy[r * c.out_c + o];
      abs_sum[o] += std::abs(double(dy[r * c.out_c + o]));
    }
  ErrorBudget budget(fmt);
  for (uint32_t o = 0; o < c.out_c; ++o) {
    double init = db0 ? double((*db0)[o]) : 0.0;
    db[o] += init;
    budget.add(db[o], budget.rounded(db[o]), std::sqrt(rows + 2.0) * (abs_sum[o] + std::abs(init)));
  }
  return {db, budget.bound()};
}

// A bound that a dropped, doubled or misplaced term would not fit under:
// such a mistake moves the NMSE by about 1/terms (1/25 for dx at kernel 5,
// 1/175 for y at kernel 5 with 7 channels). The loosest budgets, bf16's,
// come to about 2e-3; the other formats' are far tighter.
constexpr double kLoosestBound = 1e-2;

::testing::AssertionResult matches(const std::vector<float>& out, const Ref& ref) {
  if (!(ref.bound < kLoosestBound))
    return ::testing::AssertionFailure() << "the error bound " << ref.bound << " is too loose to catch a wrong term";
  return close_to(out, ref.v, ref.bound);
}

class Conv : public GpuTestP<FormatConv> {
 protected:
  Format fmt() const { return std::get<0>(GetParam()); }
  ops::Conv2d conv() const { return conv_of(std::get<1>(GetParam())); }

  // x, w, b (or dy) in [-1, 1), in the format.
  std::vector<float> values(size_t n) { return random_values(n, -1, 1, fmt()); }

  // The forward on the GPU: y and the col scratch.
  std::vector<float> forward(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
                             std::vector<float>* col_out = nullptr) {
    const ops::Conv2d c = conv();
    Buffer bx = guarded_input(fmt(), x), bw = guarded_input(fmt(), w), bb = guarded_input(fmt(), b);
    Buffer col = guarded_output(fmt(), c.col_elements()), y = guarded_output(fmt(), c.output_elements());
    run_once([&](Sequence& seq) { ops::conv2d_forward(seq, fmt(), c, bx, bw, bb, col, y); });
    std::vector<float> cv = guarded_result(col, fmt(), c.col_elements(), "col");
    if (col_out) *col_out = cv;
    return guarded_result(y, fmt(), c.output_elements(), "y");
  }

  struct Grads {
    std::vector<float> dw, db, dx;
  };
  // im2col(x), then the whole backward into poisoned dw, db, dx.
  Grads backward(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& dy) {
    const ops::Conv2d c = conv();
    Buffer bx = guarded_input(fmt(), x), bw = guarded_input(fmt(), w), bdy = guarded_input(fmt(), dy);
    Buffer col = guarded_output(fmt(), c.col_elements()), dcol = guarded_output(fmt(), c.col_elements());
    Buffer dw = guarded_output(fmt(), c.weight_elements()), db = guarded_output(fmt(), c.out_c);
    Buffer dx = guarded_output(fmt(), c.input_elements());
    run_once([&](Sequence& seq) {
      ops::im2col(seq, fmt(), c, bx, col);
      BufferView dcol_view(dcol), dx_view(dx);
      ops::conv2d_backward(seq, fmt(), c, bdy, col, bw, dw, db, false, &dcol_view, &dx_view);
    });
    guarded_result(dcol, fmt(), c.col_elements(), "dcol");
    return {guarded_result(dw, fmt(), c.weight_elements(), "dw"), guarded_result(db, fmt(), c.out_c, "db"),
            guarded_result(dx, fmt(), c.input_elements(), "dx")};
  }
};

TEST_P(Conv, Forward) {
  const ops::Conv2d c = conv();
  auto x = values(c.input_elements()), w = values(c.weight_elements()), b = values(c.out_c);
  std::vector<float> col;
  std::vector<float> y = forward(x, w, b, &col);
  // im2col copies bits: exact, 0 ulps.
  std::vector<float> ref_col = ref_im2col(c, x);
  EXPECT_TRUE(close_to(col, std::vector<double>(ref_col.begin(), ref_col.end()), nmse_bound(fmt(), 0))) << "col";
  EXPECT_TRUE(matches(y, ref_forward(fmt(), c, x, w, b))) << "y";
}

// The direct kernel kept for the benchmark: the same y, the bias added in
// fp32 before one rounding.
TEST_P(Conv, DirectForward) {
  const ops::Conv2d c = conv();
  auto x = values(c.input_elements()), w = values(c.weight_elements()), b = values(c.out_c);
  Buffer bx = guarded_input(fmt(), x), bw = guarded_input(fmt(), w), bb = guarded_input(fmt(), b);
  Buffer y = guarded_output(fmt(), c.output_elements());
  run_once([&](Sequence& seq) { ops::conv2d_forward_direct(seq, fmt(), c, bx, bw, bb, y); });
  // ref_forward's budget counts one more rounding than this kernel makes.
  EXPECT_TRUE(matches(guarded_result(y, fmt(), c.output_elements(), "y"), ref_forward(fmt(), c, x, w, b)));
}

TEST_P(Conv, Backward) {
  const ops::Conv2d c = conv();
  auto x = values(c.input_elements()), w = values(c.weight_elements()), dy = values(c.output_elements());
  Grads g = backward(x, w, dy);
  EXPECT_TRUE(matches(g.dw, ref_backward_weight(fmt(), c, dy, x, nullptr))) << "dw";
  EXPECT_TRUE(matches(g.db, ref_backward_bias(fmt(), c, dy, nullptr))) << "db";
  EXPECT_TRUE(matches(g.dx, ref_backward_input(fmt(), c, dy, w))) << "dx";
  // Inputs no window reads get exactly 0.
  std::vector<bool> cov = covered(c);
  for (size_t i = 0; i < cov.size(); ++i)
    if (!cov[i]) {
      EXPECT_EQ(g.dx[i], 0.0f) << "dx at unread input " << i;
    }
}

// Gradient accumulation over two micro-batches: the recording replayed twice
// adds dY^T col to dw and the column sums of dY to db each time. Without
// dcol and dx only dw and db are computed.
TEST_P(Conv, BackwardAccumulates) {
  const ops::Conv2d c = conv();
  auto x = values(c.input_elements()), dy = values(c.output_elements());
  auto dw0 = random_values(c.weight_elements(), -2, 2, fmt()), db0 = random_values(c.out_c, -2, 2, fmt());
  Buffer bx = guarded_input(fmt(), x), bdy = guarded_input(fmt(), dy);
  Buffer col = guarded_output(fmt(), c.col_elements());
  Buffer dw = guarded_output(fmt(), dw0.size(), &dw0), db = guarded_output(fmt(), db0.size(), &db0);
  Sequence seq(ctx());
  seq.begin();
  ops::im2col(seq, fmt(), c, bx, col);
  // w is not read without dx: col stands in.
  ops::conv2d_backward(seq, fmt(), c, bdy, col, col, dw, db, /*accumulate=*/true);
  seq.end();
  seq.run();
  auto dw1 = guarded_result(dw, fmt(), dw0.size(), "dw"), db1 = guarded_result(db, fmt(), db0.size(), "db");
  seq.run();
  auto dw2 = guarded_result(dw, fmt(), dw0.size(), "dw"), db2 = guarded_result(db, fmt(), db0.size(), "db");
  EXPECT_TRUE(matches(dw1, ref_backward_weight(fmt(), c, dy, x, &dw0))) << "dw after one run";
  EXPECT_TRUE(matches(db1, ref_backward_bias(fmt(), c, dy, &db0))) << "db after one run";
  // The second run adds to what the first stored: checked against that
  // plus the same products, so the first run's rounding is not counted twice.
  Ref w2 = ref_backward_weight(fmt(), c, dy, x, &dw1), b2 = ref_backward_bias(fmt(), c, dy, &db1);
  EXPECT_TRUE(matches(dw2, w2)) << "dw after two runs, against the first run's result";
  EXPECT_TRUE(matches(db2, b2)) << "db after two runs, against the first run's result";
}

// col2im sums in fp32, whatever the format: in every window of the kernel,
// the tap at (k-1, k-1) holds +1, the tap at (0, 0) holds -1 and the others
// 2^-12. An input reached by all k^2 taps sums to (k^2 - 2) 2^-12 exactly;
// a sum kept in a 16-bit format would drop each 2^-12 next to the +-1
// (below half an ulp of 1 in fp16, bf16 and cb16) and give 0, in either
// order of the taps.
TEST_P(Conv, Col2imSumsInFp32) {
  const ops::Conv2d c = conv();
  const size_t kk = c.col_cols();
  std::vector<float> dcol(c.col_elements());
  for (size_t i = 0; i < dcol.size(); ++i) {
    size_t tap = (i % kk) / c.in_c;  // ky * kernel + kx
    dcol[i] = tap == size_t(c.kernel) * c.kernel - 1 ? 1.0f : tap == 0 ? -1.0f : 0x1p-12f;
  }
  if (c.kernel == 1)
    for (float& v : dcol) v = 1.0f;
  std::vector<double> dx(c.input_elements(), 0.0), abs_sum(dx.size(), 0.0), taps(dx.size(), 0.0);
  for_each_tap(c, [&](size_t r, size_t k, int64_t xi) {
    if (xi < 0) return;
    dx[xi] += dcol[r * kk + k];
    abs_sum[xi] += std::abs(dcol[r * kk + k]);
    taps[xi] += 1;
  });
  ErrorBudget budget(fmt());
  size_t small_sums = 0;
  for (size_t i = 0; i < dx.size(); ++i) {
    budget.add(dx[i], budget.rounded(dx[i]), std::sqrt(taps[i] + 1) * abs_sum[i]);
    small_sums += taps[i] == double(c.kernel) * c.kernel && c.kernel > 1;
  }
  Buffer bdcol = guarded_input(fmt(), dcol), bdx = guarded_output(fmt(), dx.size());
  run_once([&](Sequence& seq) { ops::col2im(seq, fmt(), c, bdcol, bdx); });
  EXPECT_TRUE(close_to(guarded_result(bdx, fmt(), dx.size(), "dx"), dx, budget.bound()))
      << small_sums << " inputs sum +1, -1 and " << (c.kernel * c.kernel - 2) << " x 2^-12";
}

// Random inputs with NaN, +inf and -inf at inputs some window reads.
void spoil_covered(std::vector<float>& x, const std::vector<bool>& cov) {
  std::vector<size_t> read;
  for (size_t i = 0; i < cov.size(); ++i)
    if (cov[i]) read.push_back(i);
  std::shuffle(read.begin(), read.end(), rng());
  const float specials[] = {kNan, kInf, -kInf};
  for (size_t j = 0; j < std::min<size_t>(3, read.size()); ++j) x[read[j]] = specials[j];
}

// Counts of NaN, inf and finite entries of a reference.
struct Kinds {
  size_t nan = 0, inf = 0, finite = 0;
};
Kinds kinds(const std::vector<double>& v) {
  Kinds k;
  for (double e : v) (std::isnan(e) ? k.nan : std::isinf(e) ? k.inf : k.finite)++;
  return k;
}

TEST_P(Conv, ForwardPropagatesInfAndNan) {
  const ops::Conv2d c = conv();
  {
    SCOPED_TRACE("NaN, inf and -inf in x");
    auto x = values(c.input_elements()), w = values(c.weight_elements()), b = values(c.out_c);
    spoil_covered(x, covered(c));
    Ref ref = ref_forward(fmt(), c, x, w, b);
    ASSERT_GT(kinds(ref.v).nan, 0u) << "the case must put a NaN in y";
    EXPECT_TRUE(matches(forward(x, w, b), ref));
  }
  {
    // An inf weight makes its whole output channel inf or NaN (0 * inf on
    // padding or a zero input is NaN); a NaN bias its channel NaN.
    SCOPED_TRACE("inf in w, NaN in b");
    auto x = values(c.input_elements()), w = values(c.weight_elements()), b = values(c.out_c);
    auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng()); };
    w[pick(w.size())] = kInf;
    b[pick(b.size())] = kNan;
    Ref ref = ref_forward(fmt(), c, x, w, b);
    Kinds k = kinds(ref.v);
    ASSERT_GT(k.nan + k.inf, 0u);
    if (c.out_c > 2) {
      ASSERT_GT(k.finite, 0u) << "the other channels stay finite";
    }
    EXPECT_TRUE(matches(forward(x, w, b), ref));
  }
}

TEST_P(Conv, BackwardPropagatesInfAndNan) {
  const ops::Conv2d c = conv();
  auto x = values(c.input_elements()), w = values(c.weight_elements()), dy = values(c.output_elements());
  // NaN, inf and -inf at distinct dy elements.
  std::vector<size_t> at(dy.size());
  for (size_t i = 0; i < at.size(); ++i) at[i] = i;
  std::shuffle(at.begin(), at.end(), rng());
  const float specials[] = {kNan, kInf, -kInf};
  for (size_t j = 0; j < std::min<size_t>(3, at.size()); ++j) dy[at[j]] = specials[j];
  Grads g = backward(x, w, dy);
  Ref dw = ref_backward_weight(fmt(), c, dy, x, nullptr), db = ref_backward_bias(fmt(), c, dy, nullptr);
  Ref dx = ref_backward_input(fmt(), c, dy, w);
  // A NaN in dy[r, o] makes db[o] and row o of dw NaN, and every dx its
  // window reads; dx keeps its finite values where no special dy reaches,
  // dw and db theirs in the channels without one. (Every value here stays
  // far inside each format's range.)
  ASSERT_GT(kinds(db.v).nan, 0u);
  ASSERT_GT(kinds(dw.v).nan, 0u);
  EXPECT_TRUE(matches(g.dw, dw)) << "dw";
  EXPECT_TRUE(matches(g.db, db)) << "db";
  EXPECT_TRUE(matches(g.dx, dx)) << "dx";
}

// Finite differences. L = sum(G .* conv(x, w, b)) is linear in x, in w and
// in b separately, so L(p + hV) - L(p - hV) = <dL/dp, step> exactly, for
// any h: only rounding separates the two sides. The forward runs in fp32;
// the gradients come from the backward in the format under test, from the
// same (format-rounded) x, w and G.
//
// The tolerance is 10 standard deviations of the rounding noise: each
// forward output's fp32 error, and each gradient element's format and fp32
// errors (the budgets above, taken as independent between elements), both
// weighted by how much they move their side. It must also stay far below
// the size of the terms of <dL/dp, step>, or the check could not fail.
class ConvGrad : public Conv {
 protected:
  struct Side {
    std::vector<float> plus, minus;  // the stepped operand
  };
  // p +- h v, v with entries of either sign and magnitude in [0.5, 1).
  Side step(const std::vector<float>& p, float h) {
    Side s{p, p};
    for (size_t i = 0; i < p.size(); ++i) {
      float v = random_values(1, 0.5f, 1.0f, Format::F32)[0];
      if (std::bernoulli_distribution(0.5)(rng())) v = -v;
      s.plus[i] = p[i] + h * v;
      s.minus[i] = p[i] - h * v;
    }
    return s;
  }
};

TEST_P(ConvGrad, BackwardMatchesFiniteDifferences) {
  const Format f32 = Format::F32;
  const ops::Conv2d c = conv();
  const double u32 = unit_roundoff(f32);
  auto x = values(c.input_elements()), w = values(c.weight_elements()), b = values(c.out_c);
  auto g = values(c.output_elements());
  const float h = 0.5f;
  Side sx = step(x, h), sw = step(w, h), sb = step(b, h);

  // Six fp32 forwards, one per stepped operand.
  struct Fwd {
    const std::vector<float> *x, *w, *b;
    std::vector<float> y;
  };
  std::vector<Fwd> fwd = {{&sx.plus, &w, &b, {}}, {&sx.minus, &w, &b, {}}, {&x, &sw.plus, &b, {}},
                          {&x, &sw.minus, &b, {}}, {&x, &w, &sb.plus, {}}, {&x, &w, &sb.minus, {}}};
  {
    std::vector<Buffer> bufs;
    bufs.reserve(fwd.size() * 5);
    run_once([&](Sequence& seq) {
      for (Fwd& f : fwd) {
        bufs.push_back(guarded_input(f32, *f.x));
        const Buffer& bx = bufs.back();
        bufs.push_back(guarded_input(f32, *f.w));
        const Buffer& bw = bufs.back();
        bufs.push_back(guarded_input(f32, *f.b));
        const Buffer& bb = bufs.back();
        bufs.push_back(guarded_output(f32, c.col_elements()));
        const Buffer& col = bufs.back();
        bufs.push_back(guarded_output(f32, c.output_elements()));
        ops::conv2d_forward(seq, f32, c, bx, bw, bb, col, bufs.back());
      }
    });
    for (size_t i = 0; i < fwd.size(); ++i) fwd[i].y = guarded_result(bufs[i * 5 + 4], f32, c.output_elements());
  }
  Grads grads = backward(x, w, g);

  // L and the standard deviation of its rounding noise: y's fp32 error is
  // about u sqrt(K + 2) (sum |x w| + |b|) per element, independent ones.
  auto loss = [&](const Fwd& f, double* noise) {
    Ref r = ref_forward(f32, c, *f.x, *f.w, *f.b);  // for the magnitudes only
    std::vector<double> mag(c.output_elements(), 0.0);
    const size_t kk = c.col_cols();
    for_each_tap(c, [&](size_t row, size_t k, int64_t xi) {
      double xv = xi >= 0 ? double((*f.x)[xi]) : 0.0;
      for (uint32_t o = 0; o < c.out_c; ++o) mag[row * c.out_c + o] += std::abs(xv * (*f.w)[o * kk + k]);
    });
    double l = 0, var = 0;
    for (size_t i = 0; i < f.y.size(); ++i) {
      l += double(g[i]) * f.y[i];
      double e = u32 * (std::sqrt(kk + 2.0) * (mag[i] + std::abs((*f.b)[i % c.out_c])) + std::abs(r.v[i]));
      var += std::pow(g[i] * e, 2);
    }
    *noise += std::sqrt(var);
    return l;
  };
  // <grad, step>, with the noise of the gradient's rounding: each element
  // errs by up to u_fmt fmt_mag + u32 f32_mag (its budget), independently.
  const double u = unit_roundoff(fmt());
  auto check = [&](const char* what, const std::vector<float>& grad, const Side& s, double fd, double fd_noise,
                   const std::vector<double>& elem_err) {
    double dot = 0, terms2 = 0, var = 0;
    for (size_t i = 0; i < grad.size(); ++i) {
      double st = double(s.plus[i]) - s.minus[i];  // the step actually taken
      dot += grad[i] * st;
      terms2 += std::pow(grad[i] * st, 2);
      var += std::pow(st * elem_err[i], 2);
    }
    double tol = 10 * (fd_noise + std::sqrt(var));
    ASSERT_LT(tol, 0.1 * std::sqrt(terms2)) << what << ": tolerance too loose to detect a wrong gradient";
    EXPECT_NEAR(fd, dot, tol) << what << ": L(+) - L(-) against <gradient, step>";
  };

  // Per-element error magnitudes of the three gradients, from the same
  // budgets as the reference tests, element by element.
  const size_t kk = c.col_cols(), rows = c.col_rows();
  std::vector<double> ex(c.input_elements(), 0.0), ew(c.weight_elements(), 0.0), eb(c.out_c, 0.0);
  {
    std::vector<double> dx(ex.size(), 0.0), fmt2(ex.size(), 0.0), f32(ex.size(), 0.0), taps(ex.size(), 0.0),
        abs_d(ex.size(), 0.0);
    std::vector<double> dw(ew.size(), 0.0), dw_abs(ew.size(), 0.0);
    for_each_tap(c, [&](size_t r, size_t k, int64_t xi) {
      double xv = xi >= 0 ? double(x[xi]) : 0.0;
      double d = 0, a = 0;
      for (uint32_t o = 0; o < c.out_c; ++o) {
        double gi = g[r * c.out_c + o];
        d += gi * w[o * kk + k];
        a += std::abs(gi * w[o * kk + k]);
        dw[o * kk + k] += gi * xv;
        dw_abs[o * kk + k] += std::abs(gi * xv);
      }
      if (xi < 0) return;
      dx[xi] += d;
      fmt2[xi] += std::pow(std::abs(d) + smallest_normal(fmt()), 2);  // independent roundings: in quadrature
      f32[xi] += std::sqrt(c.out_c + 1.0) * a;
      abs_d[xi] += std::abs(d);
      taps[xi] += 1;
    });
    for (size_t i = 0; i < ex.size(); ++i)
      ex[i] = u * std::sqrt(fmt2[i] + std::pow(std::abs(dx[i]) + smallest_normal(fmt()), 2)) +
              u32 * (f32[i] + std::sqrt(taps[i] + 1) * abs_d[i]);
    for (size_t i = 0; i < ew.size(); ++i)
      ew[i] = u * (std::abs(dw[i]) + smallest_normal(fmt())) + u32 * std::sqrt(rows + 2.0) * dw_abs[i];
    for (uint32_t o = 0; o < c.out_c; ++o) {
      double s = 0, a = 0;
      for (size_t r = 0; r < rows; ++r) {
        s += g[r * c.out_c + o];
        a += std::abs(double(g[r * c.out_c + o]));
      }
      eb[o] = u * (std::abs(s) + smallest_normal(fmt())) + u32 * std::sqrt(rows + 2.0) * a;
    }
  }

  double noise = 0;
  double fd = loss(fwd[0], &noise) - loss(fwd[1], &noise);
  check("along x", grads.dx, sx, fd, noise, ex);
  noise = 0;
  fd = loss(fwd[2], &noise) - loss(fwd[3], &noise);
  check("along w", grads.dw, sw, fd, noise, ew);
  noise = 0;
  fd = loss(fwd[4], &noise) - loss(fwd[5], &noise);
  check("along b", grads.db, sb, fd, noise, eb);
}

std::string format_conv_name(const ::testing::TestParamInfo<FormatConv>& info) {
  return std::string(format_name(std::get<0>(info.param))) + "_" + shape_name(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Shaders, Conv,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::ValuesIn(kShapes)),
                         format_conv_name);
INSTANTIATE_TEST_SUITE_P(Shaders, ConvGrad,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::ValuesIn(kShapes)),
                         format_conv_name);

// Shapes and buffers the ops must refuse, with a vkamp::Error.
class ConvShapes : public GpuTest {};

TEST_F(ConvShapes, RejectsBadShapesAndShortBuffers) {
  ops::Conv2d ok = conv_of({1, 5, 5, 2, 3, 3, 1, 1});
  EXPECT_NO_THROW(ops::validate(ok));
  auto bad = [&](auto change, const char* why) {
    ops::Conv2d c = ok;
    change(c);
    EXPECT_THROW(ops::validate(c), Error) << why;
  };
  bad([](ops::Conv2d& c) { c.batch = 0; }, "batch 0");
  bad([](ops::Conv2d& c) { c.in_c = 0; }, "no input channels");
  bad([](ops::Conv2d& c) { c.out_c = 0; }, "no output channels");
  bad([](ops::Conv2d& c) { c.kernel = 0; }, "kernel 0");
  bad([](ops::Conv2d& c) { c.stride = 0; }, "stride 0");
  bad([](ops::Conv2d& c) { c.kernel = 8; }, "kernel 8 > 5 + 2 * 1");
  bad([](ops::Conv2d& c) { c.in_w = 0; }, "width 0");
  bad(
      [](ops::Conv2d& c) {
        c.batch = 1u << 20;
        c.in_h = c.in_w = 64;
      },
      "col past 2^31 elements");
  bad([](ops::Conv2d& c) { c.pad = 1u << 31; }, "padded size past 2^31");
  bad(
      [](ops::Conv2d& c) {
        c.kernel = 1u << 16;  // fits the padded input, but kernel^2 wraps 32 bits
        c.pad = 1u << 15;
      },
      "kernel^2 past 2^32");

  Format f = Format::F16;
  Buffer x(ctx(), ok.input_elements() * 2), w(ctx(), ok.weight_elements() * 2), b(ctx(), ok.out_c * 2);
  Buffer col(ctx(), ok.col_elements() * 2), y(ctx(), ok.output_elements() * 2);
  Buffer short_col(ctx(), ok.col_elements() * 2 - 2), short_y(ctx(), ok.output_elements() * 2 - 2);
  Sequence seq(ctx());
  seq.begin();
  EXPECT_THROW(ops::conv2d_forward(seq, f, ok, x, w, b, short_col, y), Error);
  EXPECT_THROW(ops::conv2d_forward(seq, f, ok, x, w, b, col, short_y), Error);
  EXPECT_THROW(ops::im2col(seq, Format::F32, ok, x, col), Error) << "x holds fp16-sized elements";
  BufferView dx_view(x);
  EXPECT_THROW(ops::conv2d_backward(seq, f, ok, y, col, w, w, b, false, nullptr, &dx_view), Error)
      << "dx without its dcol scratch";
  seq.end();
}

}  // namespace
}  // namespace vkamp::test
