// Elementwise activations, each listed once in gpu_abi/activation_list.h;
// their formulas are shaders/common/activation_fn.glsl's. GELU is the tanh
// approximation (as GPT-2 and llm.c use). ReLU runs in the arithmetic type,
// the others in fp32 for range.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "vkamp/buffer.hpp"
#include "vkamp/float_formats.hpp"
#include "vkamp/gpu_abi/activation_list.h"
#include "vkamp/sequence.hpp"

namespace vkamp::ops {

// The values are the shaders' codes (ACT_* in shaders/common/activation_fn.glsl),
// where 0 means no activation (a GEMM epilogue without one).
enum class Activation : uint32_t {
#define VKAMP_ACTIVATION_ENUMERATOR(Enumerator, SHADER_NAME, code, name, letter) Enumerator = code,
  VKAMP_ACTIVATIONS(VKAMP_ACTIVATION_ENUMERATOR)
#undef VKAMP_ACTIVATION_ENUMERATOR
};

// Every activation, in the list's order.
inline constexpr Activation kActivations[] = {
#define VKAMP_ACTIVATION_ITEM(Enumerator, SHADER_NAME, code, name, letter) Activation::Enumerator,
    VKAMP_ACTIVATIONS(VKAMP_ACTIVATION_ITEM)
#undef VKAMP_ACTIVATION_ITEM
};

// Whether f'(x) needs the input x, or can be read off the output y = f(x)
// (ReLU: y > 0 exactly where x > 0, NaN where x is NaN).
inline bool backward_needs_input(Activation a) { return a != Activation::ReLU; }

// "relu", "gelu", ...: YAML model files' `act:` and messages.
const char* activation_name(Activation a);
std::optional<Activation> parse_activation(std::string_view s);
// 'r', 'g', ...: the suffix of a layer in model strings.
char activation_letter(Activation a);
std::optional<Activation> parse_activation_letter(char c);
// For messages, in the list's order: "relu, gelu, ..." and
// "r (relu), g (gelu), ...".
std::string activation_names_text();
std::string activation_letters_text();

// y = f(x); y may be x.
void activation_forward(Sequence& seq, Format fmt, Activation act, BufferView x, BufferView y, uint32_t n);
// dx = dy * f'(x), from the forward input x; dx may be dy.
void activation_backward(Sequence& seq, Format fmt, Activation act, BufferView x, BufferView dy,
                         BufferView dx, uint32_t n);

}  // namespace vkamp::ops
