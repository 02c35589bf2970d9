#include "vkamp/float_formats.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "vkamp/error.hpp"

namespace vkamp {
namespace {

// See shaders/common/float_bits.glsl: a 1-e-m format with e = 15 - mbits.
uint32_t f32_to_small(float f, uint32_t mbits, uint32_t bias) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7FFFFFFFu;
  uint32_t shift = 23u - mbits;
  uint32_t inf_bits = ((1u << (15u - mbits)) - 1u) << mbits;
  if (a > 0x7F800000u) return sign | inf_bits | (1u << (mbits - 1u));
  uint32_t rebias = 127u - bias;
  if (a >= ((rebias + 1u) << 23)) {
    uint32_t r = a - (rebias << 23);
    r += ((1u << (shift - 1u)) - 1u) + ((r >> shift) & 1u);
    r >>= shift;
    return sign | (r < inf_bits ? r : inf_bits);
  }
  float units = std::nearbyint(std::bit_cast<float>(a) * std::ldexp(1.0f, int(bias - 1u + mbits)));
  return sign | uint32_t(units);
}

float small_to_f32(uint32_t h, uint32_t mbits, uint32_t bias) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t emask = (1u << (15u - mbits)) - 1u;
  uint32_t e = (h >> mbits) & emask;
  uint32_t m = h & ((1u << mbits) - 1u);
  uint32_t shift = 23u - mbits;
  if (e == emask) return std::bit_cast<float>(sign | 0x7F800000u | (m << shift));
  if (e == 0u) {
    float v = std::ldexp(float(m), -int(bias - 1u + mbits));
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((e + 127u - bias) << 23) | (m << shift));
}

}  // namespace

const char* format_name(Format f) {
  switch (f) {
    case Format::F32: return "fp32";
    case Format::F16: return "fp16";
    case Format::BF16: return "bf16";
    case Format::CB16: return "cb16";
  }
  return "?";
}

std::optional<Format> parse_format(std::string_view s) {
  if (s == "fp32" || s == "float32") return Format::F32;
  if (s == "fp16" || s == "float16") return Format::F16;
  if (s == "bf16" || s == "bfloat16") return Format::BF16;
  if (s == "cb16" || s == "cbfloat16") return Format::CB16;
  return std::nullopt;
}

size_t format_bytes(Format f) { return f == Format::F32 ? 4 : 2; }

double format_max(Format f) {
  switch (f) {
    case Format::F32: return std::numeric_limits<float>::max();
    case Format::F16: return 65504.0;
    case Format::BF16: return bf16_to_f32(0x7F7F);
    case Format::CB16: return cb16_to_f32(0x7DFF);
  }
  return 0;
}

// From the format's own conversions: the smallest subnormal is the bit
// pattern 1, the smallest normal has exponent field 1.
double format_min_subnormal(Format f) {
  switch (f) {
    case Format::F32: return std::numeric_limits<float>::denorm_min();
    case Format::F16: return fp16_to_f32(0x0001);
    case Format::BF16: return bf16_to_f32(0x0001);
    case Format::CB16: return cb16_to_f32(0x0001);
  }
  return 0;
}

double format_min_normal(Format f) {
  switch (f) {
    case Format::F32: return std::numeric_limits<float>::min();
    case Format::F16: return fp16_to_f32(0x0400);
    case Format::BF16: return bf16_to_f32(0x0080);
    case Format::CB16: return cb16_to_f32(0x0200);
  }
  return 0;
}

uint16_t f32_to_fp16(float f) { return uint16_t(f32_to_small(f, 10, 15)); }
float fp16_to_f32(uint16_t h) { return small_to_f32(h, 10, 15); }
uint16_t f32_to_cb16(float f) { return uint16_t(f32_to_small(f, 9, 31)); }
float cb16_to_f32(uint16_t h) { return small_to_f32(h, 9, 31); }

uint16_t f32_to_bf16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((u >> 16) | 0x40u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
float bf16_to_f32(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

static uint16_t encode16(Format fmt, float f) {
  switch (fmt) {
    case Format::F16: return f32_to_fp16(f);
    case Format::BF16: return f32_to_bf16(f);
    case Format::CB16: return f32_to_cb16(f);
    case Format::F32: break;
  }
  throw Error("encode16: fp32 is not a 16-bit format");
}

static float decode16(Format fmt, uint16_t h) {
  switch (fmt) {
    case Format::F16: return fp16_to_f32(h);
    case Format::BF16: return bf16_to_f32(h);
    case Format::CB16: return cb16_to_f32(h);
    case Format::F32: break;
  }
  throw Error("decode16: fp32 is not a 16-bit format");
}

float round_to(Format fmt, float f) {
  return fmt == Format::F32 ? f : decode16(fmt, encode16(fmt, f));
}

std::vector<uint8_t> pack(Format fmt, std::span<const float> values) {
  std::vector<uint8_t> out(values.size() * format_bytes(fmt));
  if (fmt == Format::F32) {
    if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
    return out;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t h = encode16(fmt, values[i]);
    std::memcpy(out.data() + 2 * i, &h, 2);
  }
  return out;
}

std::vector<float> unpack(Format fmt, std::span<const uint8_t> bytes) {
  size_t n = bytes.size() / format_bytes(fmt);
  std::vector<float> out(n);
  if (fmt == Format::F32) {
    if (n) std::memcpy(out.data(), bytes.data(), n * 4);
    return out;
  }
  for (size_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    out[i] = decode16(fmt, h);
  }
  return out;
}

}  // namespace vkamp
