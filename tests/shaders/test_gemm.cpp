// gemm: the three products of a linear layer Y = X W^T (forward, dX = dY W,
// dW = dY^T X, with and without accumulation), the generic gemm's alpha and
// transposes, its batched form (strides, k ranges, more products than one
// dispatch holds), inf/NaN propagation along rows and columns. The fused
// epilogue's tests are test_gemm_epilogue.cpp's, the finite-difference check
// of the backward products test_gemm_grad.cpp's, and the tensor-core
// family's test_gemm_mma.cpp's.
//
// A shape names the GEMM it runs: the output is m x n and each output sums
// k products. So for LinearForward m,n,k = batch,out,in; for
// LinearBackwardInput batch,in,out; for LinearBackwardWeight out,in,batch.
//
// Every input carries a NaN tail (a load past the operand's end would show
// up as NaN in the output) and every output is poisoned, followed by a tail
// of sentinels (a store past the end would change one).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "support/reference.hpp"
#include "shaders/gemm_reference.hpp"
#include "vkamp/config_error.hpp"
#include "vkamp/error.hpp"
#include "vkamp/knobs.hpp"
#include "vkamp/ops/gemm.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

// Initial values for an accumulating output, given the sign of what will be
// added to them: a sum that cancels (4 - 3.99) has an error relative to its
// summands, not to itself, so a relative bound on it would measure the
// cancellation rather than the kernel.
std::vector<float> initial_like(const std::vector<double>& added, float max_magnitude, Format fmt) {
  auto v = random_values(added.size(), 0, max_magnitude, fmt);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::copysign(v[i], float(added[i]));
  return v;
}

// The linear layer's three products at shape s (m, n, k as the file's
// header says), each against its double reference.
void expect_linear_forward(Format fmt, const Shape& s) {
  uint32_t batch = s.m, out = s.n, in = s.k;
  auto x = random_values(size_t(batch) * in, -1, 1, fmt);
  auto w = random_values(size_t(out) * in, -1, 1, fmt);
  Buffer bx = guarded_input(fmt, x), bw = guarded_input(fmt, w), by = guarded_output(fmt, size_t(batch) * out);
  run_once([&](Sequence& seq) { ops::linear_forward(seq, fmt, bx, bw, by, batch, in, out); });
  EXPECT_TRUE(close_to(guarded_result(by, fmt, size_t(batch) * out), ref_forward(x, w, batch, in, out),
                       gemm_bound(fmt, in), smallest_normal(fmt)));
}

void expect_linear_backward_input(Format fmt, const Shape& s) {
  uint32_t batch = s.m, in = s.n, out = s.k;
  auto dy = random_values(size_t(batch) * out, -1, 1, fmt);
  auto w = random_values(size_t(out) * in, -1, 1, fmt);
  Buffer bdy = guarded_input(fmt, dy), bw = guarded_input(fmt, w), bdx = guarded_output(fmt, size_t(batch) * in);
  run_once([&](Sequence& seq) { ops::linear_backward_input(seq, fmt, bdy, bw, bdx, batch, in, out); });
  EXPECT_TRUE(close_to(guarded_result(bdx, fmt, size_t(batch) * in), ref_backward_input(dy, w, batch, in, out),
                       gemm_bound(fmt, out), smallest_normal(fmt)));
}

void expect_linear_backward_weight(Format fmt, const Shape& s) {
  uint32_t out = s.m, in = s.n, batch = s.k;
  auto dy = random_values(size_t(batch) * out, -1, 1, fmt);
  auto x = random_values(size_t(batch) * in, -1, 1, fmt);
  Buffer bdy = guarded_input(fmt, dy), bx = guarded_input(fmt, x), bdw = guarded_output(fmt, size_t(out) * in);
  run_once([&](Sequence& seq) { ops::linear_backward_weight(seq, fmt, bdy, bx, bdw, batch, in, out); });
  EXPECT_TRUE(close_to(guarded_result(bdw, fmt, size_t(out) * in), ref_backward_weight(dy, x, batch, in, out),
                       gemm_bound(fmt, batch), smallest_normal(fmt)));
}

class Gemm : public GpuTestP<FormatShape> {};

TEST_P(Gemm, LinearForward) { expect_linear_forward(std::get<0>(GetParam()), std::get<1>(GetParam())); }

TEST_P(Gemm, LinearBackwardInput) { expect_linear_backward_input(std::get<0>(GetParam()), std::get<1>(GetParam())); }

TEST_P(Gemm, LinearBackwardWeight) { expect_linear_backward_weight(std::get<0>(GetParam()), std::get<1>(GetParam())); }

// Gradient accumulation over two micro-batches: the same recording replayed
// twice adds dY^T X to what dW held each time.
TEST_P(Gemm, LinearBackwardWeightAccumulates) {
  auto [fmt, s] = GetParam();
  uint32_t out = s.m, in = s.n, batch = s.k;
  auto dy = random_values(size_t(batch) * out, -1, 1, fmt);
  auto x = random_values(size_t(batch) * in, -1, 1, fmt);
  auto p = ref_backward_weight(dy, x, batch, in, out);
  auto dw0 = initial_like(p, 4, fmt);
  Buffer bdy = guarded_input(fmt, dy), bx = guarded_input(fmt, x), bdw = guarded_output(fmt, dw0.size(), &dw0);
  Sequence seq(ctx());
  seq.begin();
  ops::linear_backward_weight(seq, fmt, bdy, bx, bdw, batch, in, out, /*accumulate=*/true);
  seq.end();
  seq.run();
  auto once = guarded_result(bdw, fmt, dw0.size());
  seq.run();
  auto twice = guarded_result(bdw, fmt, dw0.size());
  std::vector<double> ref1(p.size()), ref2(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    ref1[i] = dw0[i] + p[i];
    ref2[i] = dw0[i] + 2 * p[i];
  }
  EXPECT_TRUE(close_to(once, ref1, gemm_bound(fmt, batch), smallest_normal(fmt))) << "after one run";
  // The second result went through two roundings to the format.
  EXPECT_TRUE(close_to(twice, ref2, gemm_bound(fmt, 2 * batch, 2.0), smallest_normal(fmt))) << "after two runs";
}

// The generic gemm at every transpose combination: alpha scales the product
// only, and accumulate adds the old C unscaled.
TEST_P(Gemm, AlphaScalesTheProductAtEveryTranspose) {
  auto [fmt, s] = GetParam();
  std::uniform_real_distribution<float> mag(0.25f, 2.0f);
  std::bernoulli_distribution neg(0.5);
  struct Case {
    ops::Gemm g;
    std::vector<float> a, b, c0;
    std::vector<double> product;  // alpha op(A) op(B), in double
    Buffer *ba = nullptr, *bb = nullptr, *bc = nullptr;
  };
  std::vector<Case> cases;
  std::vector<Buffer> buffers;
  buffers.reserve(3 * 8);
  for (int t = 0; t < 8; ++t) {
    Case c;
    c.g = {.m = s.m, .n = s.n, .k = s.k, .trans_a = bool(t & 1), .trans_b = bool(t & 2),
           .alpha = (neg(rng()) ? -1.0f : 1.0f) * mag(rng()), .accumulate = bool(t & 4)};
    c.a = random_values(size_t(s.m) * s.k, -1, 1, fmt);
    c.b = random_values(size_t(s.k) * s.n, -1, 1, fmt);
    const ops::Gemm& g = c.g;
    // op(A)[i,l] and op(B)[l,j] from the storage layouts the header defines.
    auto a = [&](uint32_t i, uint32_t l) { return double(g.trans_a ? c.a[l * g.m + i] : c.a[i * g.k + l]); };
    auto b = [&](uint32_t l, uint32_t j) { return double(g.trans_b ? c.b[j * g.k + l] : c.b[l * g.n + j]); };
    c.product.assign(size_t(g.m) * g.n, 0.0);
    for (uint32_t i = 0; i < g.m; ++i)
      for (uint32_t j = 0; j < g.n; ++j) {
        double sum = 0;
        for (uint32_t l = 0; l < g.k; ++l) sum += a(i, l) * b(l, j);
        c.product[i * g.n + j] = double(g.alpha) * sum;
      }
    if (g.accumulate) c.c0 = initial_like(c.product, 2, fmt);
    buffers.push_back(guarded_input(fmt, c.a));
    c.ba = &buffers.back();
    buffers.push_back(guarded_input(fmt, c.b));
    c.bb = &buffers.back();
    buffers.push_back(guarded_output(fmt, size_t(s.m) * s.n, c.g.accumulate ? &c.c0 : nullptr));
    c.bc = &buffers.back();
    cases.push_back(std::move(c));
  }
  run_once([&](Sequence& seq) {
    for (auto& c : cases) ops::gemm(seq, fmt, c.g, *c.ba, *c.bb, *c.bc);
  });
  for (auto& c : cases) {
    const ops::Gemm& g = c.g;
    std::vector<double> ref = c.product;
    if (g.accumulate)
      for (size_t i = 0; i < ref.size(); ++i) ref[i] += c.c0[i];
    EXPECT_TRUE(close_to(guarded_result(*c.bc, fmt, ref.size()), ref, gemm_bound(fmt, g.k), smallest_normal(fmt)))
        << "trans_a " << g.trans_a << ", trans_b " << g.trans_b << ", alpha " << g.alpha << ", accumulate "
        << g.accumulate;
  }
}

// A NaN in the first operand and +inf/-inf in the second must reach exactly
// the outputs that depend on them: for Y = X W^T, NaN at X[r,.] fills row r
// of Y and inf at W[o,.] fills column o; for dX = dY W, NaN at dY[r,.] fills
// row r, inf at W[.,c] column c; for dW = dY^T X, NaN at dY[.,o] fills row o,
// inf at X[.,i] column i. Everything else stays finite.
TEST_P(Gemm, NanAndInfReachOnlyTheirRowsAndColumns) {
  auto [fmt, s] = GetParam();
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng()); };
  // NaN somewhere in `first`; +inf and -inf in `second`, in different rows
  // of its stored matrix (rows x cols) where there are two. `first` holds
  // no zero: 0 x inf is NaN, and a NaN outside the NaN's rows would be the
  // definition's, not a leak (uniform draws in [-1, 1) hit 0 exactly about
  // once in 2^24; seed 5534916485064980775 did, at 1000 x 33 x 7).
  auto spoil = [&](std::vector<float>& first, std::vector<float>& second, uint32_t rows, uint32_t cols) {
    for (float& v : first)
      if (v == 0) v = 0.5f;
    first[pick(first.size())] = kNan;
    uint32_t r1 = uint32_t(pick(rows)), r2 = rows > 1 ? (r1 + 1 + uint32_t(pick(rows - 1))) % rows : r1;
    second[size_t(r1) * cols + pick(cols)] = kInf;
    if (r2 != r1) second[size_t(r2) * cols + pick(cols)] = -kInf;
  };
  struct Op {
    const char* name;
    std::vector<double> ref;
    Buffer* out;
    uint32_t rows, cols;  // of the output
  };
  std::vector<Buffer> buffers;
  buffers.reserve(9);
  std::vector<Op> ops_;

  {  // forward: m,n,k = batch,out,in; NaN in X, infs in W (out x in)
    uint32_t batch = s.m, out = s.n, in = s.k;
    auto x = random_values(size_t(batch) * in, -1, 1, fmt), w = random_values(size_t(out) * in, -1, 1, fmt);
    spoil(x, w, out, in);
    buffers.push_back(guarded_input(fmt, x));
    buffers.push_back(guarded_input(fmt, w));
    buffers.push_back(guarded_output(fmt, size_t(batch) * out));
    ops_.push_back({"linear_forward", ref_forward(x, w, batch, in, out), &buffers.back(), batch, out});
  }
  {  // dX: m,n,k = batch,in,out; NaN in dY, infs in W stored out x in (spoil its columns: transpose)
    uint32_t batch = s.m, in = s.n, out = s.k;
    auto dy = random_values(size_t(batch) * out, -1, 1, fmt);
    // Build W^T (in x out) so the infs land in different columns of W.
    auto wt = random_values(size_t(in) * out, -1, 1, fmt);
    spoil(dy, wt, in, out);
    std::vector<float> w(wt.size());
    for (uint32_t i = 0; i < in; ++i)
      for (uint32_t o = 0; o < out; ++o) w[o * in + i] = wt[i * out + o];
    buffers.push_back(guarded_input(fmt, dy));
    buffers.push_back(guarded_input(fmt, w));
    buffers.push_back(guarded_output(fmt, size_t(batch) * in));
    ops_.push_back({"linear_backward_input", ref_backward_input(dy, w, batch, in, out), &buffers.back(), batch, in});
  }
  {  // dW: m,n,k = out,in,batch; NaN in dY, infs in X stored batch x in (spoil its columns)
    uint32_t out = s.m, in = s.n, batch = s.k;
    auto dy = random_values(size_t(batch) * out, -1, 1, fmt);
    auto xt = random_values(size_t(in) * batch, -1, 1, fmt);
    spoil(dy, xt, in, batch);
    std::vector<float> x(xt.size());
    for (uint32_t i = 0; i < in; ++i)
      for (uint32_t b = 0; b < batch; ++b) x[b * in + i] = xt[i * batch + b];
    buffers.push_back(guarded_input(fmt, dy));
    buffers.push_back(guarded_input(fmt, x));
    buffers.push_back(guarded_output(fmt, size_t(out) * in));
    ops_.push_back({"linear_backward_weight", ref_backward_weight(dy, x, batch, in, out), &buffers.back(), out, in});
  }
  run_once([&](Sequence& seq) {
    ops::linear_forward(seq, fmt, buffers[0], buffers[1], buffers[2], s.m, s.k, s.n);
    ops::linear_backward_input(seq, fmt, buffers[3], buffers[4], buffers[5], s.m, s.n, s.k);
    ops::linear_backward_weight(seq, fmt, buffers[6], buffers[7], buffers[8], s.k, s.n, s.m);
  });
  for (const Op& op : ops_) {
    SCOPED_TRACE(op.name);
    size_t nans = 0, infs = 0, finite = 0;
    for (double r : op.ref) {
      if (std::isnan(r)) ++nans;
      else if (std::isinf(r)) ++infs;
      else ++finite;
    }
    // The case must exercise all three kinds of output, or it proves nothing.
    ASSERT_EQ(nans % op.cols, 0u) << "the NaN fills whole rows";
    ASSERT_GT(nans, 0u);
    if (op.rows > 1) {
      ASSERT_GT(infs, 0u);
    }
    if (op.rows > 1 && op.cols > 2) {
      ASSERT_GT(finite, 0u);
    }
    EXPECT_TRUE(close_to(guarded_result(*op.out, fmt, op.ref.size()), op.ref, gemm_bound(fmt, s.k), smallest_normal(fmt)));
  }
}

// The batched form at every k range and transpose: 3 products, each from
// its own fresh operands, laid out at strides larger than the dense ones
// (the gaps poisoned, and a C gap must stay so) or, in two of the cases,
// dense (stride 0). A NaN in product 1's B reaches exactly the outputs whose
// sums include it: with a k range, the rows that skip its k stay finite.
TEST_P(Gemm, BatchedAtEveryTransposeAndKRange) {
  auto [fmt, s] = GetParam();
  constexpr uint32_t kBatch = 3;
  using ops::KRange;
  // Each k range with either transpose of A and of B, accumulating or not,
  // among them the three products attention runs (A B^T; A B up to the
  // row; A^T B from the row). Six pipelines, not all 24 combinations: each
  // costs about a second of compiling on lavapipe.
  const struct {
    bool trans_a, trans_b;
    KRange range;
    bool accumulate, dense;
  } kinds[] = {{false, false, KRange::all, false, false},     {true, true, KRange::all, true, true},
               {false, false, KRange::up_to_row, true, false}, {true, true, KRange::up_to_row, false, false},
               {true, false, KRange::from_row, false, false},  {false, true, KRange::from_row, true, true}};
  struct Case {
    ops::Gemm g;
    std::vector<float> a, b, c0;
    std::vector<double> ref;  // per product, dense m x n
    Buffer *ba = nullptr, *bb = nullptr, *bc = nullptr;
  };
  std::vector<Case> cases;
  std::vector<Buffer> buffers;
  buffers.reserve(3 * std::size(kinds));
  const uint64_t na = uint64_t(s.m) * s.k, nb = uint64_t(s.k) * s.n, nc = uint64_t(s.m) * s.n;
  for (const auto& kind : kinds) {
    Case c;
    const bool dense = kind.dense;
    c.g = {.m = s.m, .n = s.n, .k = s.k, .trans_a = kind.trans_a, .trans_b = kind.trans_b, .alpha = 0.75f,
           .accumulate = kind.accumulate, .batch = kBatch, .stride_a = dense ? 0 : na + 3,
           .stride_b = dense ? 0 : nb + 5, .stride_c = dense ? 0 : nc + 2, .k_range = kind.range};
    const ops::Gemm& g = c.g;
    const uint64_t sa = dense ? na : g.stride_a, sb = dense ? nb : g.stride_b, sc = dense ? nc : g.stride_c;
    c.a = random_values((kBatch - 1) * sa + na, -1, 1, fmt);
    c.b = random_values((kBatch - 1) * sb + nb, -1, 1, fmt);
    for (uint64_t i = na; i < sa; ++i) c.a[i] = kNan;  // gaps after product 0
    for (uint64_t i = nb; i < sb; ++i) c.b[i] = kNan;
    c.b[sb + std::uniform_int_distribution<uint64_t>(0, nb - 1)(rng())] = kNan;
    auto in_range = [&](uint32_t i, uint32_t l) {
      return g.k_range == ops::KRange::all || (g.k_range == ops::KRange::up_to_row ? l <= i : l >= i);
    };
    c.ref.assign(kBatch * nc, 0.0);
    for (uint32_t z = 0; z < kBatch; ++z) {
      const float* za = &c.a[z * sa];
      const float* zb = &c.b[z * sb];
      for (uint32_t i = 0; i < g.m; ++i)
        for (uint32_t j = 0; j < g.n; ++j) {
          double sum = 0;
          for (uint32_t l = 0; l < g.k; ++l)
            if (in_range(i, l))
              sum += double(g.trans_a ? za[l * g.m + i] : za[i * g.k + l]) *
                     (g.trans_b ? zb[j * g.k + l] : zb[l * g.n + j]);
          c.ref[z * nc + i * g.n + j] = double(g.alpha) * sum;
        }
    }
    // C as stored: products at stride sc, the gaps poisoned.
    size_t c_elems = (kBatch - 1) * sc + nc;
    buffers.push_back(guarded_input(fmt, c.a));
    c.ba = &buffers.back();
    buffers.push_back(guarded_input(fmt, c.b));
    c.bb = &buffers.back();
    if (g.accumulate) {
      c.c0 = initial_like(c.ref, 2, fmt);
      std::vector<float> stored(c_elems, kNan);
      for (uint32_t z = 0; z < kBatch; ++z)
        for (uint64_t i = 0; i < nc; ++i) stored[z * sc + i] = c.c0[z * nc + i];
      buffers.push_back(guarded_output(fmt, c_elems, &stored));
    } else {
      buffers.push_back(guarded_output(fmt, c_elems));
    }
    c.bc = &buffers.back();
    cases.push_back(std::move(c));
  }
  run_once([&](Sequence& seq) {
    for (auto& c : cases) ops::gemm(seq, fmt, c.g, *c.ba, *c.bb, *c.bc);
  });
  for (auto& c : cases) {
    const ops::Gemm& g = c.g;
    SCOPED_TRACE(::testing::Message() << "trans_a " << g.trans_a << ", trans_b " << g.trans_b << ", accumulate "
                                      << g.accumulate << ", k_range " << uint32_t(g.k_range) << ", stride_c "
                                      << g.stride_c);
    const uint64_t sc = g.stride_c ? g.stride_c : nc;
    auto stored = guarded_result(*c.bc, fmt, (kBatch - 1) * sc + nc);
    std::vector<float> out(kBatch * nc);
    for (uint32_t z = 0; z < kBatch; ++z) {
      for (uint64_t i = 0; i < nc; ++i) out[z * nc + i] = stored[z * sc + i];
      for (uint64_t i = nc; z + 1 < kBatch && i < sc; ++i)
        ASSERT_TRUE(std::isnan(stored[z * sc + i])) << "the gap after product " << z << " was written";
    }
    std::vector<double> ref = c.ref;
    if (g.accumulate)
      for (size_t i = 0; i < ref.size(); ++i) ref[i] += c.c0[i];
    EXPECT_TRUE(close_to(out, ref, gemm_bound(fmt, g.k), smallest_normal(fmt)));
  }
}

// The direct path reads the same operand values through texel buffers and
// storage buffers, and sums them in the same order: the same bits, NaN and
// inf included, at every transpose, accumulating or not.
TEST_P(Gemm, TexelAndStorageLoadsGiveTheSameBits) {
  auto [fmt, s] = GetParam();
  for (const bool trans : {false, true}) {
    SCOPED_TRACE(trans ? "A^T B^T, accumulating" : "A B");
    ops::Gemm g{.m = s.m, .n = s.n, .k = s.k, .trans_a = trans, .trans_b = trans, .alpha = 0.75f,
                .accumulate = trans};
    auto a = random_values(size_t(s.m) * s.k, -1, 1, fmt), b = random_values(size_t(s.k) * s.n, -1, 1, fmt);
    auto c0 = random_values(size_t(s.m) * s.n, -1, 1, fmt);
    auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng()); };
    a[pick(a.size())] = kNan;
    b[pick(b.size())] = std::numeric_limits<float>::infinity();
    auto product = [&](bool texel_loads) {
      KernelPaths paths;
      paths.gemm_tiled = false;
      paths.gemm_texel_loads = texel_loads;
      UsePaths use(paths);
      Buffer ba = guarded_input(fmt, a), bb = guarded_input(fmt, b);
      Buffer bc = guarded_output(fmt, c0.size(), &c0);
      run_once([&](Sequence& seq) { ops::gemm(seq, fmt, g, ba, bb, bc); });
      return guarded_result(bc, fmt, c0.size());
    };
    const std::vector<float> texel = product(true), storage = product(false);
    ASSERT_EQ(texel.size(), storage.size());
    EXPECT_EQ(0, std::memcmp(texel.data(), storage.data(), texel.size() * sizeof(float)));
  }
}

// Column blocks of wider rows over a two-level batch, as attention reads
// each head's columns of the token rows: 2 outer x 3 inner products, each
// operand of product (o, i) the i-th block of cols columns in rows ld =
// 3 cols + 3 apart, starting `first` elements in, outer blocks rows x ld
// apart. The padding columns are NaN, and C's must stay NaN.
TEST_P(Gemm, ColumnBlocksOfWiderRowsOverTwoLevelBatch) {
  auto [fmt, s] = GetParam();
  constexpr uint32_t kOuter = 2, kInner = 3, kFirst = 5;
  struct Stored {  // one operand: rows x cols per product
    uint32_t rows, cols, ld;
    uint64_t outer;
    uint64_t at(uint32_t z, uint32_t r, uint32_t c) const {
      return kFirst + (z / kInner) * outer + (z % kInner) * cols + uint64_t(r) * ld + c;
    }
    uint64_t elements() const { return kFirst + kOuter * outer; }
  };
  auto stored = [](uint32_t rows, uint32_t cols) {
    const uint32_t ld = kInner * cols + 3;
    return Stored{rows, cols, ld, uint64_t(rows) * ld};
  };
  for (const bool trans : {false, true}) {
    SCOPED_TRACE(trans ? "A^T B, accumulating" : "A B^T");
    ops::Gemm g{.m = s.m, .n = s.n, .k = s.k, .trans_a = trans, .trans_b = !trans, .alpha = 0.75f,
                .accumulate = trans, .batch = kOuter * kInner};
    const Stored sa = trans ? stored(s.k, s.m) : stored(s.m, s.k);
    const Stored sb = trans ? stored(s.k, s.n) : stored(s.n, s.k);
    const Stored sc = stored(s.m, s.n);
    for (auto [st, first, stride, outer, ld] :
         {std::tie(sa, g.first_a, g.stride_a, g.outer_stride_a, g.lda),
          std::tie(sb, g.first_b, g.stride_b, g.outer_stride_b, g.ldb),
          std::tie(sc, g.first_c, g.stride_c, g.outer_stride_c, g.ldc)}) {
      first = kFirst, stride = st.cols, outer = st.outer, ld = st.ld;
    }
    g.inner = kInner;
    // Operands: random in every product's block, NaN elsewhere.
    auto fill = [&](const Stored& st) {
      std::vector<float> v(st.elements(), kNan);
      auto r = random_values(size_t(g.batch) * st.rows * st.cols, -1, 1, fmt);
      size_t next = 0;
      for (uint32_t z = 0; z < g.batch; ++z)
        for (uint32_t i = 0; i < st.rows; ++i)
          for (uint32_t j = 0; j < st.cols; ++j) v[st.at(z, i, j)] = r[next++];
      return v;
    };
    std::vector<float> a = fill(sa), b = fill(sb), c0 = fill(sc);
    std::vector<double> ref(size_t(g.batch) * s.m * s.n);
    for (uint32_t z = 0; z < g.batch; ++z)
      for (uint32_t i = 0; i < s.m; ++i)
        for (uint32_t j = 0; j < s.n; ++j) {
          double sum = 0;
          for (uint32_t l = 0; l < s.k; ++l)
            sum += double(trans ? a[sa.at(z, l, i)] : a[sa.at(z, i, l)]) *
                   (trans ? b[sb.at(z, l, j)] : b[sb.at(z, j, l)]);
          ref[(size_t(z) * s.m + i) * s.n + j] = double(g.alpha) * sum + (g.accumulate ? c0[sc.at(z, i, j)] : 0.0);
        }
    Buffer ba = guarded_input(fmt, a), bb = guarded_input(fmt, b);
    Buffer bc = guarded_output(fmt, c0.size(), g.accumulate ? &c0 : nullptr);
    run_once([&](Sequence& seq) { ops::gemm(seq, fmt, g, ba, bb, bc); });
    auto got = guarded_result(bc, fmt, c0.size());
    std::vector<float> out(ref.size());
    std::vector<bool> in_block(got.size(), false);
    for (uint32_t z = 0; z < g.batch; ++z)
      for (uint32_t i = 0; i < s.m; ++i)
        for (uint32_t j = 0; j < s.n; ++j) {
          out[(size_t(z) * s.m + i) * s.n + j] = got[sc.at(z, i, j)];
          in_block[sc.at(z, i, j)] = true;
        }
    for (size_t i = 0; i < got.size(); ++i)
      if (!in_block[i]) {
        ASSERT_TRUE(std::isnan(got[i])) << "element " << i << " outside every block was written";
      }
    EXPECT_TRUE(close_to(out, ref, gemm_bound(fmt, s.k), smallest_normal(fmt)));
  }
}

INSTANTIATE_TEST_SUITE_P(Shaders, Gemm,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::ValuesIn(kShapes)),
                         format_shape_name);

// A linear layer of a real model, in -> out over m tokens (Shape {m, out,
// in}): its forward, dX and dW. The real dimensions are the layer's; m is
// cut to an awkward 33 (dW sums over it, and no path depends on its size).
// Qwen2.5-0.5B's MLP (hidden 896, intermediate 4,864) in every run; Llama
// 3 8B's (4,096, 14,336), whose k of 14,336 is the longest, as `large`.
// With them a rank-8 LoRA adapter's two factors, A (in -> 8) and B (8 ->
// out), whose products are the lora op's (graph/ops/lora.cpp: u = x A^T,
// scale u B^T, dB, du = dY B, dA, dx += du A): thin outputs over long k.
class LinearRealSize : public GpuTestP<FormatShape> {};

TEST_P(LinearRealSize, ForwardAndBothGradients) {
  const auto [fmt, layer] = GetParam();
  {
    SCOPED_TRACE("forward");
    expect_linear_forward(fmt, layer);
  }
  {
    SCOPED_TRACE("dX");
    expect_linear_backward_input(fmt, {layer.m, layer.k, layer.n});
  }
  SCOPED_TRACE("dW");
  expect_linear_backward_weight(fmt, {layer.n, layer.k, layer.m});
}

// gate/up, down, then the adapters' A of down and B of gate/up.
constexpr Shape kQwenMlp[] = {{33, 4864, 896}, {33, 896, 4864}, {33, 8, 4864}, {33, 4864, 8}};
constexpr Shape kLlama8bMlp[] = {{33, 14336, 4096}, {33, 4096, 14336}, {33, 8, 14336}, {33, 14336, 8}};

INSTANTIATE_TEST_SUITE_P(RealSize, LinearRealSize,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::ValuesIn(kQwenMlp)),
                         format_shape_name);
INSTANTIATE_TEST_SUITE_P(Large, LinearRealSize,
                         ::testing::Combine(::testing::ValuesIn(kAllFormats), ::testing::ValuesIn(kLlama8bMlp)),
                         format_shape_name);

// More products than the 65535 workgroups of one dispatch along z: the
// host dispatches them in slices, each product still at its own offsets.
class GemmBatch : public GpuTest {};

TEST_F(GemmBatch, MoreProductsThanOneDispatchHasWorkgroups) {
  const Format f = Format::F32;
  const ops::Gemm g{.m = 1, .n = 2, .k = 3, .batch = 65535 + 7};
  auto a = random_values(uint64_t(g.batch) * g.m * g.k, -1, 1, f);
  auto b = random_values(uint64_t(g.batch) * g.k * g.n, -1, 1, f);
  std::vector<double> ref(uint64_t(g.batch) * g.m * g.n);
  for (uint64_t z = 0; z < g.batch; ++z)
    for (uint32_t j = 0; j < g.n; ++j) {
      double sum = 0;
      for (uint32_t l = 0; l < g.k; ++l) sum += double(a[z * g.k + l]) * b[z * g.k * g.n + l * g.n + j];
      ref[z * g.n + j] = sum;
    }
  Buffer ba = guarded_input(f, a), bb = guarded_input(f, b), bc = guarded_output(f, ref.size());
  run_once([&](Sequence& seq) { ops::gemm(seq, f, g, ba, bb, bc); });
  EXPECT_TRUE(close_to(guarded_result(bc, f, ref.size()), ref, gemm_bound(f, g.k), smallest_normal(f)));
}

// The epilogue cannot combine with accumulation or a batch, a kept
// pre-activation needs an activation, and the backward form needs z, no
// bias, and an activation whose backward reads z: Error, before anything
// is recorded.
TEST_F(GemmBatch, EpilogueRejectsWhatItCannotDo) {
  const Format f = Format::F32;
  Buffer a = upload(ctx(), f, std::vector<float>(8, 1)), c = upload(ctx(), f, std::vector<float>(8, 0));
  Sequence seq(ctx());
  seq.begin();
  using ops::Activation;
  const ops::Gemm g{.m = 2, .n = 2, .k = 2};
  ops::GemmEpilogue relu{.act = Activation::ReLU}, z_only{.bias = BufferView(a), .z = BufferView(c)};
  EXPECT_THROW(ops::gemm(seq, f, {.m = 2, .n = 2, .k = 2, .accumulate = true}, a, a, c, relu), Error);
  EXPECT_THROW(ops::gemm(seq, f, {.m = 2, .n = 2, .k = 2, .batch = 2}, a, a, c, relu), Error);
  EXPECT_THROW(ops::gemm(seq, f, g, a, a, c, z_only), Error);
  for (const ops::GemmEpilogue& backward :
       {ops::GemmEpilogue{.act = Activation::GELU, .act_grad = true},
        ops::GemmEpilogue{.bias = BufferView(a), .act = Activation::GELU, .z = BufferView(c), .act_grad = true},
        ops::GemmEpilogue{.act = Activation::ReLU, .z = BufferView(c), .act_grad = true}})
    EXPECT_THROW(ops::gemm(seq, f, g, a, a, c, backward), Error);
  seq.end();
}

// The plan behind the shapes above, so the tests keep covering the thin
// tile and split-k if the heuristic moves. Plain host tests: no device.
TEST(GemmPlan, ThinOutputsGetThinTiles) {
  ops::GemmPlan conv_forward = ops::gemm_plan({.m = 4099, .n = 6, .k = 25}, /*tiled=*/false);
  EXPECT_EQ(conv_forward.tile_n(), 8u) << "6 channels in 8 columns, not 64";
  EXPECT_GE(conv_forward.tile_m(), 256u);
  EXPECT_EQ(conv_forward.splits, 1u) << "k = 25 is short";
  EXPECT_EQ(conv_forward.bm * conv_forward.bn, 16u) << "thin outputs keep 4 x 4 blocks";
  ops::GemmPlan wide = ops::gemm_plan({.m = 512, .n = 512, .k = 512}, false);
  EXPECT_EQ(wide.bm, 16u) << "direct path: 16 x 8 outputs per thread";
  EXPECT_EQ(wide.bn, 8u);
  EXPECT_EQ(wide.tile_n(), 128u);
  EXPECT_EQ(wide.tile_m(), 256u);
  ops::GemmPlan wide_tiled = ops::gemm_plan({.m = 512, .n = 512, .k = 512}, true);
  EXPECT_EQ(wide_tiled.tile_n(), 64u) << "the tiled path keeps 4 x 4 per thread";
  EXPECT_EQ(wide_tiled.tile_m(), 64u);
  // Too few tiles to share out: 127 x 127 takes 4 tiles of 32 rows (16 x 8
  // blocks, 2 x 16 threads), not 1 of 128.
  EXPECT_EQ(ops::gemm_plan({.m = 127, .n = 127, .k = 127}, false).tile_m(), 32u);
  EXPECT_EQ(ops::gemm_plan({.m = 127, .n = 127, .k = 127}, true).tile_m(), 32u);
  // The shared-memory variant keeps its tiles within 64 rows (16 KiB).
  EXPECT_LE(ops::gemm_plan({.m = 4099, .n = 6, .k = 25}, true).tile_m(), 64u);
}

// KernelPaths::gemm_block forces the direct path's block, and refuses
// sides outside 1 to 16 (the environment's text is checked in test_knobs).
TEST(GemmPlan, BlockSetsTheBlockOrIsRefused) {
  const ops::Gemm g{.m = 512, .n = 512, .k = 512};
  const ops::GemmPlan p = ops::gemm_plan(g, false, KernelPaths::Dims{4, 8});
  EXPECT_EQ(p.bm, 4u);
  EXPECT_EQ(p.bn, 8u);
  for (KernelPaths::Dims bad : {KernelPaths::Dims{32, 8}, {0, 4}, {4, 17}})
    EXPECT_THROW(ops::gemm_plan(g, false, bad), ConfigError) << bad.first << "x" << bad.second;
}

TEST(GemmPlan, SmallOutputsWithLongKAreSplit) {
  for (bool tiled : {false, true}) {
    ops::GemmPlan dw = ops::gemm_plan({.m = 6, .n = 25, .k = 4099, .trans_a = true}, tiled);
    EXPECT_GT(dw.splits, 1u);
    EXPECT_GE(uint64_t(dw.splits) * dw.k_chunk, 4099u) << "every k is in a slice";
    EXPECT_LT(uint64_t(dw.splits - 1) * dw.k_chunk, 4099u) << "no slice is empty";
    EXPECT_GT(ops::gemm_plan({.m = 33, .n = 7, .k = 1000}, tiled).splits, 1u);
    EXPECT_EQ(ops::gemm_plan({.m = 127, .n = 127, .k = 127}, tiled).splits, 1u);
    EXPECT_EQ(ops::gemm_plan({.m = 0, .n = 25, .k = 4099}, tiled).splits, 1u) << "an empty C splits nothing";
    EXPECT_EQ(ops::gemm_plan({.m = 6, .n = 25, .k = 4099, .batch = 2}, tiled).splits, 1u)
        << "a batch takes workgroup z, which split-k would need";
  }
}

}  // namespace
}  // namespace vkamp::test
