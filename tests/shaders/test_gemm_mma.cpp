// The tensor-core GEMM family (gemm_mma.comp) against a double reference:
// a covering set of shapes (every warp count, fragment block, BK and
// buffering in some shape, every transpose in some shape), the 16-byte loads
// and straight stores of interior tiles next to the checked loads and staged
// stores of edge tiles, an epilogue, unaligned operands, split-k at BK 64,
// the emulation at 16, 32 and 64 lanes, and attention's causal products
// (K_RANGE) with their NaN masks. On a GPU (the tensor-core entries) every
// shape the tuner may pick on the device runs too.
// These run where the context has the tensor-core path (VKAMP_COOPMAT=1 or
// khr on a device with cooperative matrices, or =emulate anywhere: the ctest
// variants shaders_gemm_mma_*), and skip elsewhere. The rest of the GEMM
// suite (test_gemm.cpp) runs on the family through those variants too.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "support/gpu_test.hpp"
#include "support/guarded.hpp"
#include "support/numerics.hpp"
#include "vkamp/ops/gemm.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

constexpr Format kF16 = Format::F16;

// Rounded once to fp16 (one more fp32 rounding where a bias is added) after
// an fp32 sum whose k roundings random-walk to about sqrt(k) fp32 ulps
// (test_gemm.cpp's bound). The tensor cores' fp32 accumulation is at least
// as good as the fmas' here: the fp16 x fp16 products are exact in fp32.
double mma_bound(uint32_t k) {
  return nmse_bound(kF16, 1.0 + (1.0 + std::sqrt(double(k))) * unit_roundoff(Format::F32) / unit_roundoff(kF16));
}

// op(A)'s element (i, l) and op(B)'s (l, j) as stored.
size_t a_at(const ops::Gemm& g, uint32_t i, uint32_t l) { return g.trans_a ? size_t(l) * g.m + i : size_t(i) * g.k + l; }
size_t b_at(const ops::Gemm& g, uint32_t l, uint32_t j) { return g.trans_b ? size_t(j) * g.k + l : size_t(l) * g.n + j; }

// Whether output row i sums k index l.
bool keeps(const ops::Gemm& g, uint32_t i, uint32_t l) {
  if (g.k_range == ops::KRange::up_to_row) return l <= i;
  if (g.k_range == ops::KRange::from_row) return l >= i;
  return true;
}

// alpha op(A) op(B) (+ bias[j]) in double, rows summing only their k range.
std::vector<double> reference(const ops::Gemm& g, const std::vector<float>& a, const std::vector<float>& b,
                              const std::vector<float>* bias = nullptr) {
  std::vector<double> ref(size_t(g.m) * g.n, 0.0);
  for (uint32_t i = 0; i < g.m; ++i)
    for (uint32_t j = 0; j < g.n; ++j) {
      double sum = 0;
      for (uint32_t l = 0; l < g.k; ++l)
        if (keeps(g, i, l)) sum += double(a[a_at(g, i, l)]) * b[b_at(g, l, j)];
      ref[size_t(i) * g.n + j] = double(g.alpha) * sum + (bias ? double((*bias)[j]) : 0.0);
    }
  return ref;
}

class GemmMmaFamily : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (ctx().gemm_mma() == GemmMma::off)
      GTEST_SKIP() << "no tensor-core GEMM on this context (VKAMP_COOPMAT=emulate runs its emulation)";
  }
  bool emulated() const { return ctx().gemm_mma() == vkamp::GemmMma::emulated; }
  uint32_t lanes() const { return ops::gemm_mma_lanes(ctx()); }
  ops::GemmKernel kernel(const char* name) const {
    const auto k = ops::GemmKernel::parse(name);
    EXPECT_TRUE(k) << name;
    return k.value_or(ops::GemmKernel{});
  }
  bool fits(const ops::GemmKernel& k) const { return ops::gemm_candidate_fits(k, ctx().info(), lanes()); }

  // Runs g on `kernel` and returns C; `lanes` 0: the context's.
  std::vector<float> run(const ops::Gemm& g, const ops::GemmKernel& kernel, const std::vector<float>& a,
                         const std::vector<float>& b, uint32_t lanes = 0, const std::vector<float>* bias = nullptr) {
    const size_t nc = size_t(g.m) * g.n;
    Buffer ba = guarded_input(kF16, a), bb = guarded_input(kF16, b), bc = guarded_output(kF16, nc);
    Buffer bbias = guarded_input(kF16, bias ? *bias : std::vector<float>{0});
    ops::GemmEpilogue epilogue;
    if (bias) epilogue.bias = BufferView(bbias);
    run_once([&](Sequence& seq) { ops::gemm_with(seq, kF16, g, kernel, ba, bb, bc, epilogue, lanes); });
    return guarded_result(bc, kF16, nc);
  }
  // g on `kernel` from fresh operands in [-1, 1] against the reference.
  void check(const ops::Gemm& g, const ops::GemmKernel& kernel, bool with_bias = false) {
    auto a = random_values(size_t(g.m) * g.k, -1, 1, kF16), b = random_values(size_t(g.k) * g.n, -1, 1, kF16);
    const auto bias = random_values(g.n, -1, 1, kF16);
    const std::vector<float>* bp = with_bias ? &bias : nullptr;
    EXPECT_TRUE(close_to(run(g, kernel, a, b, 0, bp), reference(g, a, b, bp), mma_bound(g.k), smallest_normal(kF16)));
  }
  // A product one tile and 8 past it along m and n, and k two slices and 8:
  // one interior tile (16-byte loads; straight stores without an epilogue),
  // edge tiles both ways (checked loads, staged stores), and a last slice
  // cut short. Rows of 8 multiples keep the fast paths open.
  static ops::Gemm tile_and_edges(const ops::GemmMmaShape& s, int transposes) {
    return {.m = s.tile_m() + 8, .n = s.tile_n() + 8, .k = 2 * s.bk + 8, .trans_a = (transposes & 1) != 0,
            .trans_b = (transposes & 2) != 0, .alpha = 0.5f};
  }
};

// Every parameter of the family in some shape, every transpose in some
// shape: compiling a pipeline per shape and transpose is what the emulated
// run costs, so not the cross product (EveryShapeTheTunerMayPick runs that
// on tensor cores). The 8-warp shape also runs with an epilogue (a bias:
// every tile staged through store_c).
TEST_F(GemmMmaFamily, CoveringShapes) {
  const char* names[] = {"mma-w4-f1x2-k64-db", "mma-w4-f2x2-k32-sb", "mma-w4-f4x2-k64-sb", "mma-w8-f2x4-k32-sb",
                         "mma-w8-f1x2-k32-db"};
  for (int i = 0; i < 5; ++i) {
    const ops::GemmKernel k = kernel(names[i]);
    ASSERT_TRUE(fits(k)) << names[i] << " needs more than this device's shared memory or workgroup";
    const ops::Gemm g = tile_and_edges(k.shape, i % 4);
    SCOPED_TRACE(k.name() + " trans_a " + std::to_string(g.trans_a) + " trans_b " + std::to_string(g.trans_b));
    check(g, k);
    if (k.shape.warps == 8 && !k.shape.double_buffer) check(g, k, /*with_bias=*/true);
  }
}

// Every shape the tuner may pick on this device (gemm_candidates), on tensor
// cores: on a GPU compiling is cheap, and a cache file may name any of them.
TEST_F(GemmMmaFamily, EveryShapeTheTunerMayPick) {
  if (emulated()) GTEST_SKIP() << "the emulated entries take CoveringShapes (compiling 20-odd shapes on a CPU driver)";
  const auto all = ops::gemm_candidates(ctx().info(), lanes());
  ASSERT_GT(all.size(), 1u) << "no tensor-core shape fits the device";
  for (size_t i = 1; i < all.size(); ++i) {
    const ops::Gemm g = tile_and_edges(all[i].shape, int(i % 4));
    SCOPED_TRACE(all[i].name() + " trans_a " + std::to_string(g.trans_a) + " trans_b " + std::to_string(g.trans_b));
    check(g, all[i]);
  }
}

// Rows and offsets off multiples of 8 (odd k and n): every load checked,
// every store staged; each transpose once, single- and double-buffered.
TEST_F(GemmMmaFamily, UnalignedOperandsAtEveryTranspose) {
  const char* names[] = {"mma-w4-f2x2-k32-sb", "mma-w4-f1x2-k64-db"};
  for (int t = 0; t < 4; ++t) {
    const ops::Gemm g{.m = 70, .n = 77, .k = 45, .trans_a = (t & 1) != 0, .trans_b = (t & 2) != 0};
    SCOPED_TRACE(std::string(names[t / 2]) + " transposes " + std::to_string(t));
    check(g, kernel(names[t / 2]));
  }
}

// The emulation's warps are LANES invocations wide: 16, 32 and 64 give the
// same bits (each element sums its products in the same order) and match
// the reference.
TEST_F(GemmMmaFamily, EmulatedLaneCounts) {
  if (!emulated()) GTEST_SKIP() << "on tensor cores a warp is the device's subgroup";
  const ops::Gemm g{.m = 72, .n = 136, .k = 72, .trans_b = true};
  const auto k = kernel("mma-w4-f2x2-k32-db");
  auto a = random_values(size_t(g.m) * g.k, -1, 1, kF16), b = random_values(size_t(g.k) * g.n, -1, 1, kF16);
  const auto at32 = run(g, k, a, b, 32);
  EXPECT_TRUE(close_to(at32, reference(g, a, b), mma_bound(g.k), smallest_normal(kF16)));
  for (uint32_t lanes : {16u, 64u}) {
    const auto out = run(g, k, a, b, lanes);
    EXPECT_EQ(0, std::memcmp(out.data(), at32.data(), out.size() * sizeof(float))) << lanes << " lanes";
  }
}

// A long k over few tiles is split into slices of whole BK 64 steps.
TEST_F(GemmMmaFamily, SplitKAtBk64) {
  const ops::Gemm g{.m = 40, .n = 24, .k = 4104, .trans_a = true};
  const auto k = kernel("mma-w4-f2x2-k64-sb");
  const ops::GemmMmaPlan plan = ops::gemm_mma_plan(g, k.shape);
  EXPECT_GT(plan.splits, 1u);
  EXPECT_EQ(plan.k_chunk % 64, 0u);
  check(g, k);
}

// Attention's causal products (P V and dQ = dS K sum k <= i, as stored;
// dK = dS^T Q sums k >= i, A transposed) on a BK deeper than the tile (the
// tile's last slice cut at its last row) and on the 128 x 128 tile: 150
// positions is several 16-row fragments, a diagonal in every tile and a
// cut-short last tile.
const char* const kCausalKernels[] = {"mma-w4-f1x2-k64-db", "mma-w8-f2x4-k32-sb"};

TEST_F(GemmMmaFamily, CausalProductsMatchTheReference) {
  for (const char* name : kCausalKernels)
    for (auto [range, trans_a] : {std::pair{ops::KRange::up_to_row, false}, {ops::KRange::from_row, true}}) {
      const ops::Gemm g{.m = 150, .n = 40, .k = 150, .trans_a = trans_a, .k_range = range};
      SCOPED_TRACE(std::string(name) + " k_range " + std::to_string(uint32_t(range)));
      check(g, kernel(name));
    }
}

// A NaN where row i must not look (k past its range: in a chunk the
// fragment skips, on the masked side of a diagonal chunk, or in a slice the
// tile never loads) never reaches row i; one inside its range reaches
// exactly the outputs that sum it. The products and kernels are
// CausalProductsMatchTheReference's (the same pipelines).
TEST_F(GemmMmaFamily, CausalMasksKeepNanOutOfTheirRows) {
  const uint32_t t = 150, n = 40;
  for (const char* name : kCausalKernels)
    for (auto [range, trans_a] : {std::pair{ops::KRange::up_to_row, false}, {ops::KRange::from_row, true}}) {
      const ops::Gemm g{.m = t, .n = n, .k = t, .trans_a = trans_a, .k_range = range};
      // op(A) NaN at (37, 40) (up_to_row: masked on the diagonal chunk
      // 32..47; from_row: kept), (37, 60) (up_to_row: masked, in a chunk
      // past the fragment's rows), (70, 20) (from_row: masked, in a chunk
      // the fragment skips or a slice its tile never loads) and (140, 145)
      // (up_to_row: masked on the diagonal of the cut-short last tile).
      // op(B) NaN at (45, 5): kept by rows >= 45 (up_to_row) or <= 45.
      auto a = random_values(size_t(t) * t, -1, 1, kF16), b = random_values(size_t(t) * n, -1, 1, kF16);
      const uint32_t nan_a[4][2] = {{37, 40}, {37, 60}, {70, 20}, {140, 145}};
      for (const auto& p : nan_a) a[a_at(g, p[0], p[1])] = kNan;
      b[b_at(g, 45, 5)] = kNan;
      const auto out = run(g, kernel(name), a, b);
      SCOPED_TRACE(std::string(name) + (range == ops::KRange::up_to_row ? " up_to_row" : " from_row"));
      for (uint32_t i = 0; i < t; ++i)
        for (uint32_t j = 0; j < n; ++j) {
          bool nan = keeps(g, i, 45) && j == 5;
          for (const auto& p : nan_a) nan = nan || (p[0] == i && keeps(g, i, p[1]));
          ASSERT_EQ(std::isnan(out[size_t(i) * n + j]), nan) << "row " << i << ", column " << j;
        }
    }
}

TEST_F(GemmMmaFamily, TakesFp16ProductsOnly) {
  const ops::Gemm plain{.m = 8, .n = 8, .k = 8};
  EXPECT_TRUE(ops::gemm_takes_mma(ctx(), kF16, plain));
  EXPECT_TRUE(ops::gemm_takes_mma(ctx(), kF16, {.m = 8, .n = 8, .k = 8, .k_range = ops::KRange::up_to_row}))
      << "causal products run on the family too";
  EXPECT_FALSE(ops::gemm_takes_mma(ctx(), Format::BF16, plain)) << "cooperative matrices here are fp16 only";
  EXPECT_FALSE(ops::gemm_takes_mma(ctx(), Format::F32, plain));
  if (ctx().paths().gemm_mma == GemmMma::emulated) EXPECT_TRUE(emulated()) << "the variant must run what it names";
}

}  // namespace
}  // namespace vkamp::test
