// Gemm::plan_rows: a block of rows of a product, planned as the whole
// product, gives the whole product's rows bit for bit. A block planned on
// its own has fewer tiles and so splits k into more slices, which rounds
// differently; the chunked logits (train/logit_chunks.hpp) rest on this.
#include <bit>
#include <vector>

#include "support/guarded.hpp"
#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "vkamp/ops/gemm.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

// The head's input gradient: dh = dlogits W, rows x hidden over a vocabulary.
constexpr uint32_t kRows = 512, kHidden = 64, kVocab = 8192, kBlock = 40;

TEST(GemmPlan, ARowBlockSplitsAsTheWholeProduct) {
  const ops::Gemm whole{.m = kRows, .n = kHidden, .k = kVocab};
  for (bool tiled : {false, true}) {
    ops::Gemm block = whole;
    block.m = kBlock;
    EXPECT_NE(ops::gemm_plan(block, tiled).splits, ops::gemm_plan(whole, tiled).splits) << "tiled " << tiled;
    block.plan_rows = kRows;
    EXPECT_EQ(ops::gemm_plan(block, tiled).splits, ops::gemm_plan(whole, tiled).splits);
    EXPECT_EQ(ops::gemm_plan(block, tiled).k_chunk, ops::gemm_plan(whole, tiled).k_chunk);
  }
}

class GemmRowBlocks : public GpuTestP<Format> {};

TEST_P(GemmRowBlocks, BlocksPlannedAsTheWholeGiveItsBits) {
  const Format fmt = GetParam();
  const size_t eb = format_bytes(fmt);
  Buffer a = upload(ctx(), fmt, random_values(size_t(kRows) * kVocab, -1, 1, fmt));
  Buffer b = upload(ctx(), fmt, random_values(size_t(kVocab) * kHidden, -1, 1, fmt));
  Buffer whole = poisoned(ctx(), fmt, size_t(kRows) * kHidden), blocks = poisoned(ctx(), fmt, size_t(kRows) * kHidden);
  Sequence seq(ctx());
  seq.begin();
  ops::gemm(seq, fmt, {.m = kRows, .n = kHidden, .k = kVocab}, a, b, whole);
  for (uint32_t first = 0; first < kRows; first += kBlock) {
    const uint32_t n = std::min(kBlock, kRows - first);
    ops::gemm(seq, fmt, {.m = n, .n = kHidden, .k = kVocab, .plan_rows = kRows},
              BufferView(a, first * size_t(kVocab) * eb, n * size_t(kVocab) * eb), b,
              BufferView(blocks, first * size_t(kHidden) * eb, n * size_t(kHidden) * eb));
  }
  seq.end();
  seq.run();
  const std::vector<float> w = download(whole, fmt, size_t(kRows) * kHidden);
  const std::vector<float> r = download(blocks, fmt, size_t(kRows) * kHidden);
  for (size_t i = 0; i < w.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(r[i]), std::bit_cast<uint32_t>(w[i])) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(Shaders, GemmRowBlocks, ::testing::Values(Format::F32, Format::F16),
                         [](const auto& info) { return std::string(format_name(info.param)); });

}  // namespace
}  // namespace vkamp::test
