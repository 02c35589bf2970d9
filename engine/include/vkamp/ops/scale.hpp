// Elementwise scale: y = x * factor, optionally times (or divided by) a
// scalar read from a GPU buffer, so loss scale/unscale needs no host sync.
// Computed in fp32 whatever the storage (2^16 is not an fp16 value).
#pragma once
#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

enum class ScaleBy { Constant, BufferValue, BufferReciprocal };

// y[i] = x[i] * factor * {1, s[k], 1/s[k]}, k = `index`; x and y may be the
// same buffer. `s` is an fp32 buffer (ignored for ScaleBy::Constant).
void scale(Sequence& seq, Format fmt, BufferView x, BufferView y, uint32_t n, float factor,
           ScaleBy by = ScaleBy::Constant, const Buffer* s = nullptr, uint32_t index = 0);

}  // namespace vkamp::ops
