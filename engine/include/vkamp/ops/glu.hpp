// Gated linear units (Shazeer's GLU variants): y = f(gate) * up
// elementwise, Llama's SwiGLU MLP down(silu(gate(x)) * up(x)) with f = SiLU
// (GeGLU with GELU). fp32 math, one rounding per output (shaders/glu.comp).
#pragma once
#include <cstdint>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/ops/activation.hpp"
#include "vkamp/ops/grad_write.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

void glu_forward(Sequence& seq, Format fmt, Activation act, BufferView gate, BufferView up, BufferView y, uint32_t n);

// dgate = dy * up * f'(gate), dup = dy * f(gate), each per its GradWrite
// (a skipped one's view is neither checked nor touched: any view will do).
void glu_backward(Sequence& seq, Format fmt, Activation act, BufferView gate, BufferView up, BufferView dy,
                  BufferView dgate, GradWrite gate_write, BufferView dup, GradWrite up_write, uint32_t n);

}  // namespace vkamp::ops
