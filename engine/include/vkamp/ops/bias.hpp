// Bias add over rows and its gradient, a column reduction in fp32.
#pragma once
#include <cstdint>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

// y[r, c] += b[c] in place, y: rows x cols.
void bias_add_forward(Sequence& seq, Format fmt, BufferView y, BufferView b, uint32_t rows, uint32_t cols);
// db[c] = sum_r dy[r, c] (+ db[c] when accumulate).
void bias_add_backward(Sequence& seq, Format fmt, BufferView dy, BufferView db, uint32_t rows,
                       uint32_t cols, bool accumulate = false);

}  // namespace vkamp::ops
