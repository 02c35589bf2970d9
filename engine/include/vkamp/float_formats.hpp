// Storage formats and their host-side conversions. The conversions are the
// same integer algorithms as shaders/common/float_bits.glsl: round to nearest
// even, inf/NaN kept, values past the range become inf.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace vkamp {

enum class Format : uint8_t { F32, F16, BF16, CB16 };

inline constexpr Format kAllFormats[] = {Format::F32, Format::F16, Format::BF16, Format::CB16};

// "fp32", "fp16", "bf16", "cb16".
const char* format_name(Format f);
// Accepts the short names and fp16_type spellings: float32, float16, bfloat16, cbfloat16.
std::optional<Format> parse_format(std::string_view s);
size_t format_bytes(Format f);
// Largest finite value of the format.
double format_max(Format f);
// Smallest positive value (the subnormal with bit pattern 1) and smallest
// normal value of the format: where gradients start losing bits, and below
// half the former, where they round to zero.
double format_min_subnormal(Format f);
double format_min_normal(Format f);

uint16_t f32_to_fp16(float f);
float fp16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);
float bf16_to_f32(uint16_t h);
uint16_t f32_to_cb16(float f);
float cb16_to_f32(uint16_t h);

// f rounded to the nearest value the format can hold.
float round_to(Format fmt, float f);

// Arrays of floats to and from the format's bytes.
std::vector<uint8_t> pack(Format fmt, std::span<const float> values);
std::vector<float> unpack(Format fmt, std::span<const uint8_t> bytes);

}  // namespace vkamp
