// fp32 <-> 16-bit storage conversions, round to nearest even, inf/NaN kept,
// values past the format's range become inf.
#pragma once
#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

// dst[i] (fmt) = src[i] (fp32), i < n; accumulate: dst[i] = dst[i] + src[i],
// summed in fp32 and rounded once.
void convert_from_f32(Sequence& seq, Format fmt, BufferView src_f32, BufferView dst, uint32_t n,
                      bool accumulate = false);
// dst[i] (fp32) = src[i] (fmt), i < n; accumulate: dst[i] += src[i] in fp32.
void convert_to_f32(Sequence& seq, Format fmt, BufferView src, BufferView dst_f32, uint32_t n,
                    bool accumulate = false);

}  // namespace vkamp::ops
