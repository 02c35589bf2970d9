// The linear layer's three products on operands larger than one storage
// binding (lavapipe's and Adreno's 128 MiB): a real vocabulary's logits
// (rows x 151,936) and an lm_head wide enough to pass the limit itself. The
// GEMM runs them as several products on views of the same buffers
// (ops/gemm_binding_chunks.cpp): C's rows, B's rows (C's columns) and the
// shared dimension in blocks. Against the double reference with the GEMM
// tests' bound, one more rounding of C per block of the shared dimension.
#include <cmath>
#include <vector>

#include "support/guarded.hpp"
#include "shaders/gemm_reference.hpp"
#include "support/gpu_test.hpp"
#include "support/numerics.hpp"
#include "vkamp/ops/gemm.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::test {
namespace {

constexpr uint32_t kVocab = 151936;

class GemmBindingChunks : public GpuTestP<Format> {
 protected:
  Format fmt() const { return GetParam(); }
  uint64_t range() const { return ctx().info().max_storage_range; }
  // How many pieces of `bytes` each the binding holds, plus a few: enough
  // to pass it.
  uint32_t past_limit(uint64_t bytes) const { return uint32_t(range() / bytes + 5); }

  void expect_products(uint32_t batch, uint32_t in, uint32_t out) {
    SCOPED_TRACE(::testing::Message() << "batch " << batch << ", in " << in << ", out " << out);
    if (range() > (uint64_t(1) << 28)) GTEST_SKIP() << "this device binds " << range() << " bytes: too large to pass here";
    std::vector<float> x = random_values(size_t(batch) * in, -1, 1, fmt());
    std::vector<float> w = random_values(size_t(out) * in, -1, 1, fmt());
    std::vector<float> dy = random_values(size_t(batch) * out, -1, 1, fmt());
    Buffer xb = upload(ctx(), fmt(), x), wb = upload(ctx(), fmt(), w), dyb = upload(ctx(), fmt(), dy);
    Buffer y = poisoned(ctx(), fmt(), size_t(batch) * out), dx = poisoned(ctx(), fmt(), size_t(batch) * in);
    Buffer dw = poisoned(ctx(), fmt(), size_t(out) * in);
    Sequence seq(ctx());
    seq.begin();
    ops::linear_forward(seq, fmt(), xb, wb, y, batch, in, out);
    ops::linear_backward_input(seq, fmt(), dyb, wb, dx, batch, in, out);
    ops::linear_backward_weight(seq, fmt(), dyb, xb, dw, batch, in, out);
    seq.end();
    seq.run();
    const size_t eb = format_bytes(fmt());
    // Blocks of the shared dimension, each a rounding of C: dX's over W's
    // rows of `in`, dW's over dY's rows of `out`.
    const double dx_blocks = std::ceil(double(out) * in * eb / range());
    const double dw_blocks = std::ceil(double(batch) * out * eb / range());
    EXPECT_TRUE(close_to(download(y, fmt(), size_t(batch) * out), ref_forward(x, w, batch, in, out), gemm_bound(fmt(), in)));
    EXPECT_TRUE(close_to(download(dx, fmt(), size_t(batch) * in), ref_backward_input(dy, w, batch, in, out),
                         gemm_bound(fmt(), out, dx_blocks)));
    EXPECT_TRUE(close_to(download(dw, fmt(), size_t(out) * in), ref_backward_weight(dy, x, batch, in, out),
                         gemm_bound(fmt(), batch, dw_blocks)));
  }
};

// Logits past the limit: Y's and dY's rows in blocks, dW's sum over the rows too.
TEST_P(GemmBindingChunks, LogitsLargerThanOneBinding) {
  expect_products(past_limit(uint64_t(kVocab) * format_bytes(fmt())), 8, kVocab);
}

// A weight past the limit: its rows (Y's columns) in blocks, dX's sum over
// them, dW's rows.
TEST_P(GemmBindingChunks, WeightLargerThanOneBinding) {
  expect_products(4, past_limit(uint64_t(kVocab) * format_bytes(fmt())), kVocab);
}

INSTANTIATE_TEST_SUITE_P(Shaders, GemmBindingChunks, ::testing::Values(Format::F32, Format::F16),
                         [](const auto& info) { return std::string(format_name(info.param)); });

}  // namespace
}  // namespace vkamp::test
