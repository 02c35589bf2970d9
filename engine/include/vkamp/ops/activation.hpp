// Elementwise activations. GELU is the tanh approximation (as GPT-2 and
// llm.c use); tanh and GELU are evaluated in fp32 for range, ReLU in the
// arithmetic type.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

// The values are the shaders' codes (shaders/common/activation_fn.glsl),
// where 0 means no activation (a GEMM epilogue without one).
enum class Activation : uint32_t { ReLU = 1, GELU = 2, Tanh = 3 };

// Whether f'(x) needs the input x (GELU, tanh), or can be read off the
// output y = f(x) (ReLU: y > 0 exactly where x > 0, NaN where x is NaN).
inline bool backward_needs_input(Activation a) { return a != Activation::ReLU; }

const char* activation_name(Activation a);
std::optional<Activation> parse_activation(std::string_view s);

// y = f(x); y may be x.
void activation_forward(Sequence& seq, Format fmt, Activation act, BufferView x, BufferView y, uint32_t n);
// dx = dy * f'(x), from the forward input x; dx may be dy.
void activation_backward(Sequence& seq, Format fmt, Activation act, BufferView x, BufferView dy,
                         BufferView dx, uint32_t n);

}  // namespace vkamp::ops
