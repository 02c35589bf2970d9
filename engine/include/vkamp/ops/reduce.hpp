// Reductions, accumulated in fp32 in a fixed order (deterministic):
// sum of squares (gradient norms, MSE) and the sum of an fp32 array.
#pragma once
#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

// fp32 scratch bytes the reductions below need for n inputs.
size_t reduce_scratch_bytes(uint32_t n);

// out[out_index] (fp32) = factor * sum_i (x[i] - t[i])^2, over i < n, with
// t = 0 when target is null. `scratch` holds reduce_scratch_bytes(n).
void sum_squares(Sequence& seq, Format fmt, BufferView x, const BufferView* target, uint32_t n,
                 const Buffer& scratch, BufferView out, uint32_t out_index = 0, float factor = 1.0f);

// out[out_index] (fp32) = factor * sum_i x[i], x fp32, in one workgroup.
void sum_f32(Sequence& seq, BufferView x, uint32_t n, BufferView out, uint32_t out_index = 0,
             float factor = 1.0f);

}  // namespace vkamp::ops
