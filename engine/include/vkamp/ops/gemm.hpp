// GEMM for training: C[m x n] = alpha * op(A) * op(B) (+ C when accumulate),
// fp32 accumulation, A/B/C in the storage format, all row-major.
// Any m, n, k (no multiple-of-tile requirement).
#pragma once
#include <cstdint>
#include <optional>

#include "vkamp/buffer.hpp"
#include "vkamp/device_info.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/kernel_paths.hpp"
#include "vkamp/ops/activation.hpp"
#include "vkamp/ops/gemm_kernel.hpp"
#include "vkamp/quant/ggml_type.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

// Which k output row i sums: all of them, or only k <= i or k >= i (the
// causal products of attention, where k and i both index positions). The
// products outside the range are skipped, not multiplied by zero, so an inf
// or NaN there does not reach row i.
enum class KRange : uint32_t { all = 0, up_to_row = 1, from_row = 2 };

struct Gemm {
  uint32_t m = 0, n = 0, k = 0;
  bool trans_a = false;  // A stored k x m instead of m x k
  bool trans_b = false;  // B stored n x k instead of k x n
  float alpha = 1.0f;
  bool accumulate = false;
  // `batch` independent products: product z reads A + z stride_a, B + z
  // stride_b and writes C + z stride_c (strides in elements; 0 means the
  // dense m k, k n, m n; with `inner` below, the strides within one outer
  // step). Attention runs one per (example, head).
  uint32_t batch = 1;
  uint64_t stride_a = 0, stride_b = 0, stride_c = 0;
  KRange k_range = KRange::all;
  // Row strides of A, B and C as stored, in elements (0: dense, the stored
  // row's length), so a product can read or write a column block of a wider
  // matrix: one head's columns of attention's token rows.
  uint32_t lda = 0, ldb = 0, ldc = 0;
  // Where product 0 starts in each view, in elements.
  uint64_t first_a = 0, first_b = 0, first_c = 0;
  // A two-level batch: product z = o * inner + i starts at first + o *
  // outer_stride + i * stride ((example, head) products over token rows).
  // inner = 0: one level. An outer stride of 0 continues the inner one.
  uint32_t inner = 0;
  uint64_t outer_stride_a = 0, outer_stride_b = 0, outer_stride_c = 0;
  // Plan the kernel and split-k as for a product of this many rows of C
  // (0: m), so that a block of rows of a larger product sums each output
  // in the same order, to the same bits, as the whole product would
  // (the chunked logits, train/logit_chunks.hpp).
  uint32_t plan_rows = 0;
  // B held in ggml blocks of this type (a quantized frozen weight, W of a
  // linear layer): dense, one product, its stored rows whole blocks. Each
  // value is dequantized as the kernel loads it (gemm.comp's ".quant"
  // build) and the product runs as if B held those values in fp32.
  std::optional<quant::GgmlType> b_blocks;
};

// What the product does to each output as it stores it (a fused linear
// layer's forward): C = f(z), z = alpha op(A) op(B) + bias, the bias added
// in fp32 and z rounded to the format before f, as a separate bias_add and
// activation would see it. Or, with act_grad, an activation's backward in
// the GEMM that computes dY: C = dY f'(z), dY the product rounded to the
// format and z read from `z`, as activation_backward computes it from a
// stored dY (not for ReLU, whose backward reads y and is a select). Not
// with accumulate or a batch (Error).
struct GemmEpilogue {
  std::optional<BufferView> bias;  // n values, added to every row
  std::optional<Activation> act;   // f; without it the identity
  // m x n: z too, for a backward that needs f'(z) (needs act); with
  // act_grad, the z that f'(z) is read from.
  std::optional<BufferView> z;
  bool act_grad = false;  // the backward form: needs act and z, no bias
  bool empty() const { return !bias && !act; }
};

// Runs on the kernel the context's GEMM tuner picks for the product's class
// (ops/gemm_tuner.hpp; the same kernel for the same class every time).
void gemm(Sequence& seq, Format fmt, const Gemm& g, BufferView a, BufferView b, BufferView c,
          const GemmEpilogue& epilogue = {});

// How gemm() runs a product: WX x WY threads per workgroup, each computing
// bm x bn outputs (4 x 4 on the tiled path; 16 x 8 on the direct path where C
// is large enough), and k cut into `splits` slices of `k_chunk` summed by a second
// pass (split-k) when C has too few tiles to keep the device busy (never for
// a batch: the products fill the device).
struct GemmPlan {
  uint32_t wx = 16, wy = 16;
  uint32_t bm = 4, bn = 4;  // outputs per thread: bm rows x bn columns
  uint32_t splits = 1, k_chunk = 0;
  uint32_t tile_m() const { return bm * wy; }
  uint32_t tile_n() const { return bn * wx; }
};
// `tiled`: the shared-memory variant (GPUs), whose tiles are capped at 64 rows.
// Not tiled: the direct variant (CPU drivers); `block` (KernelPaths::gemm_block) forces its block.
GemmPlan gemm_plan(const Gemm& g, bool tiled, std::optional<KernelPaths::Dims> block = {});
// How the tensor-core GEMM (gemm_mma.comp) runs a product in one of its
// shapes: the tile, and split-k as gemm_plan's (k_chunk a multiple of the
// shape's BK; never with a k range, whose slices start at tile rows).
struct GemmMmaPlan {
  GemmMmaShape shape;
  uint32_t splits = 1, k_chunk = 0;
  uint32_t tile_m() const { return shape.tile_m(); }
  uint32_t tile_n() const { return shape.tile_n(); }
};
GemmMmaPlan gemm_mma_plan(const Gemm& g, const GemmMmaShape& shape);
// Whether gemm() may run this product on the tensor-core GEMM: fp16 where
// the context's GemmMma is not off (which kernel then runs is the tuner's
// choice: ops/gemm_tuner.hpp).
bool gemm_takes_mma(const Context& ctx, Format fmt, const Gemm& g);
// The tensor-core GEMM's warp width: the device's subgroup size on tensor
// cores, KernelPaths::mma_lanes (16, 32 or 64; 32 unset) in the emulation.
uint32_t gemm_mma_lanes(const Context& ctx);
// gemm() on a given kernel (the tuner times candidates through this; tests
// compare kernels). An mma kernel needs gemm_takes_mma; `lanes` (emulated
// build only; 0: gemm_mma_lanes) sets the emulation's warp width.
void gemm_with(Sequence& seq, Format fmt, const Gemm& g, const GemmKernel& kernel, BufferView a, BufferView b,
               BufferView c, const GemmEpilogue& epilogue = {}, uint32_t lanes = 0);
// Whether the direct path reads A and B through uniform texel buffers
// (CPU drivers, unless KernelPaths::gemm_texel_loads says otherwise).
bool gemm_texel_loads(const Context& ctx);

// The three products a linear layer Y = X W^T needs, X: batch x in,
// W: out x in, Y: batch x out.
// Y = f(X W^T + b) with an epilogue (bias {out}, activation, Z = X W^T + b).
// `w_blocks`: W held in ggml blocks (Gemm::b_blocks).
void linear_forward(Sequence& seq, Format fmt, BufferView x, BufferView w, BufferView y,
                    uint32_t batch, uint32_t in, uint32_t out, const GemmEpilogue& epilogue = {},
                    std::optional<quant::GgmlType> w_blocks = std::nullopt);
// dX = dY W (+ dX when accumulate: X feeds another op too); an epilogue in
// its backward form (act_grad) turns dX into the dZ of the activation that
// made X.
void linear_backward_input(Sequence& seq, Format fmt, BufferView dy, BufferView w, BufferView dx,
                           uint32_t batch, uint32_t in, uint32_t out, bool accumulate = false,
                           const GemmEpilogue& epilogue = {}, std::optional<quant::GgmlType> w_blocks = std::nullopt);
// dW = dY^T X (+ dW when accumulate)
void linear_backward_weight(Sequence& seq, Format fmt, BufferView dy, BufferView x, BufferView dw,
                            uint32_t batch, uint32_t in, uint32_t out, bool accumulate = false);

}  // namespace vkamp::ops
