// Concatenation along the feature axis of row-major rows x cols matrices:
// y[r, :] = [x0[r, :], x1[r, :], ...]. Backward slices dy back into the
// inputs' gradients. One shader (concat.comp) copies a block of columns
// either way.
#pragma once
#include <cstdint>
#include <vector>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

struct ConcatPart {
  BufferView data;          // forward: an input x_i; backward: its gradient dx_i
  uint32_t cols = 0;        // features of x_i
  bool accumulate = false;  // backward only: dx_i += its slice of dy
  bool skip = false;        // backward only: x_i needs no gradient
};

// y: rows x (sum of the parts' cols).
void concat_forward(Sequence& seq, Format fmt, const std::vector<ConcatPart>& x, BufferView y, uint32_t rows);
// dx_i = (or +=) dy[:, offset_i : offset_i + cols_i].
void concat_backward(Sequence& seq, Format fmt, BufferView dy, const std::vector<ConcatPart>& dx, uint32_t rows);

}  // namespace vkamp::ops
