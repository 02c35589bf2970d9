// Elementwise sum of two tensors: the residual connection, and the sum of
// a tensor's gradients when two ops consume it.
#pragma once
#include <cstdint>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

// y = a + b, n values; y may be a or b.
void add_forward(Sequence& seq, Format fmt, BufferView a, BufferView b, BufferView y, uint32_t n);
// The gradient reaches both inputs unchanged: dx = dy, or dx += dy when
// accumulate (dx already holds another consumer's gradient).
void add_backward(Sequence& seq, Format fmt, BufferView dy, BufferView dx, uint32_t n, bool accumulate);

}  // namespace vkamp::ops
