// Bit-exact conversions between fp32 and the 16-bit formats, done in integer
// arithmetic so that every driver rounds the same way: round to nearest even,
// inf and NaN kept (NaN made quiet), values past the range become inf.
// The host mirror is engine/src/float_formats.cpp; tests compare the two.
#ifndef VKAMP_FLOAT_BITS_GLSL
#define VKAMP_FLOAT_BITS_GLSL

// A 1-e-m format with e = 15 - mbits exponent bits and the given bias
// (fp16: mbits 10, bias 15; cb16: mbits 9, bias 31).
uint f32_to_small_bits(float f, uint mbits, uint bias) {
  uint u = floatBitsToUint(f);
  uint sign = (u >> 16) & 0x8000u;
  uint a = u & 0x7FFFFFFFu;
  uint shift = 23u - mbits;
  uint inf_bits = ((1u << (15u - mbits)) - 1u) << mbits;
  if (a > 0x7F800000u) return sign | inf_bits | (1u << (mbits - 1u));
  uint rebias = 127u - bias;
  if (a >= ((rebias + 1u) << 23)) {
    // Normal in the target: drop the low mantissa bits with a round-to-even
    // carry that may ripple into the exponent (and up to inf).
    uint r = a - (rebias << 23);
    r += ((1u << (shift - 1u)) - 1u) + ((r >> shift) & 1u);
    return sign | min(r >> shift, inf_bits);
  }
  // Subnormal in the target: count units of the smallest subnormal. A count
  // of 2^mbits is the smallest normal, which has exactly that encoding.
  float units = roundEven(uintBitsToFloat(a) * exp2(float(bias - 1u + mbits)));
  return sign | uint(units);
}

uint small_bits_to_f32_bits(uint h, uint mbits, uint bias) {
  uint sign = (h & 0x8000u) << 16;
  uint emask = (1u << (15u - mbits)) - 1u;
  uint e = (h >> mbits) & emask;
  uint m = h & ((1u << mbits) - 1u);
  uint shift = 23u - mbits;
  if (e == emask) return sign | 0x7F800000u | (m << shift);
  if (e == 0u) return sign | floatBitsToUint(float(m) * exp2(-float(bias - 1u + mbits)));
  return sign | ((e + 127u - bias) << 23) | (m << shift);
}

// Bit patterns travel in 32-bit uints: a 16-bit integer anywhere but a
// load or store would need the Int16 capability, which not every device has.
uint f32_to_fp16_bits(float f) { return f32_to_small_bits(f, 10u, 15u); }

uint f32_to_cb16_bits(float f) { return f32_to_small_bits(f, 9u, 31u); }
float cb16_bits_to_f32(uint h) { return uintBitsToFloat(small_bits_to_f32_bits(h, 9u, 31u)); }

// bfloat16 is the top half of an fp32, so rounding is a carry into bit 16.
uint f32_to_bf16_bits(float f) {
  uint u = floatBitsToUint(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (u >> 16) | 0x40u;
  u += 0x7FFFu + ((u >> 16) & 1u);
  return u >> 16;
}
float bf16_bits_to_f32(uint h) { return uintBitsToFloat(h << 16); }

#endif
