// GEMM for training: C[m x n] = alpha * op(A) * op(B) (+ C when accumulate),
// fp32 accumulation, A/B/C in the storage format, all row-major.
// Any m, n, k (no multiple-of-tile requirement).
#pragma once
#include <cstdint>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

struct Gemm {
  uint32_t m = 0, n = 0, k = 0;
  bool trans_a = false;  // A stored k x m instead of m x k
  bool trans_b = false;  // B stored n x k instead of k x n
  float alpha = 1.0f;
  bool accumulate = false;
};

void gemm(Sequence& seq, Format fmt, const Gemm& g, BufferView a, BufferView b, BufferView c);

// How gemm() runs a product: WX x WY threads per workgroup, each computing
// bm x bn outputs (4 x 4 on the tiled path; 16 x 8 on the direct path where C
// is large enough), and k cut into `splits` slices of `k_chunk` summed by a second
// pass (split-k) when C has too few tiles to keep the device busy.
struct GemmPlan {
  uint32_t wx = 16, wy = 16;
  uint32_t bm = 4, bn = 4;  // outputs per thread: bm rows x bn columns
  uint32_t splits = 1, k_chunk = 0;
  uint32_t tile_m() const { return bm * wy; }
  uint32_t tile_n() const { return bn * wx; }
};
// `tiled`: the shared-memory variant (GPUs), whose tiles are capped at 64 rows.
// Not tiled: the direct variant (CPU drivers); VKAMP_GEMM_BLOCK=RxC forces its block.
GemmPlan gemm_plan(const Gemm& g, bool tiled);

// The three products a linear layer Y = X W^T needs, X: batch x in,
// W: out x in, Y: batch x out.
void linear_forward(Sequence& seq, Format fmt, BufferView x, BufferView w, BufferView y,
                    uint32_t batch, uint32_t in, uint32_t out);
// dX = dY W (+ dX when accumulate: X feeds another op too)
void linear_backward_input(Sequence& seq, Format fmt, BufferView dy, BufferView w, BufferView dx,
                           uint32_t batch, uint32_t in, uint32_t out, bool accumulate = false);
// dW = dY^T X (+ dW when accumulate)
void linear_backward_weight(Sequence& seq, Format fmt, BufferView dy, BufferView x, BufferView dw,
                            uint32_t batch, uint32_t in, uint32_t out, bool accumulate = false);

}  // namespace vkamp::ops
