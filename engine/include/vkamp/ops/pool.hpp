// 2-D max and average pooling in NHWC layout, no padding. Windows may
// overlap (stride < window); a partial window at the edge is dropped, as in
// PyTorch's default (ceil_mode=False).
#pragma once
#include <cstdint>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

enum class PoolKind : uint32_t { Max = 0, Average = 1 };

struct Pool2d {
  PoolKind kind = PoolKind::Max;
  uint32_t batch = 1;
  uint32_t in_h = 1, in_w = 1, channels = 1;
  uint32_t window = 2;
  uint32_t stride = 2;

  uint32_t out_h() const { return (in_h - window) / stride + 1; }
  uint32_t out_w() const { return (in_w - window) / stride + 1; }
  uint64_t input_elements() const { return uint64_t(batch) * in_h * in_w * channels; }
  uint64_t output_elements() const { return uint64_t(batch) * out_h() * out_w() * channels; }
};

// Throws vkamp::Error when the shape is empty or the window exceeds the input.
void validate(const Pool2d& p);

// y = max or mean over each window. Max propagates NaN (a window holding a
// NaN gives NaN).
void pool2d_forward(Sequence& seq, Format fmt, const Pool2d& p, BufferView x, BufferView y);
// dx from dy. Max routes each window's gradient to its first maximal input
// (row-major within the window), recomputed from x (no index buffer); a
// window holding a NaN routes NaN, whatever its dy, to its first NaN input,
// so a NaN forward never leaves a finite gradient behind. Average spreads
// dy / window^2 (x is not read). Overlapping windows sum in fp32, as a
// gather per input element; inputs no window covers get 0. Where windows do
// not overlap (stride >= window) one thread per window writes its inputs
// instead, with the same bits (VKAMP_POOL_GRAD=gather|window overrides).
void pool2d_backward(Sequence& seq, Format fmt, const Pool2d& p, BufferView x, BufferView dy, BufferView dx);

}  // namespace vkamp::ops
