// Element i of a tensor stored in one of ggml's types (GGUF weights), as
// fp32, bit for bit as the host's vkamp::quant::dequantize_row and so as
// ggml's dequantize_row_* (engine/src/quant/dequantize.cpp, ggml-quants.c).
//
// The includer declares the tensor's binding as 32-bit words and, before
// including this file, defines how to read word w of it:
//   layout(std430, binding = 0) readonly buffer Q { uint qwords[]; };
//   #define QWORD(w) qwords[w]
//   #include "dequant.glsl"
// then reads element i (a flat index from the binding's start; block b
// starts at byte b * block bytes) as quant_value(i). The type is the
// specialization constant QTYPE (constant_id 20, ggml's type id: 0 F32,
// 1 F16, 30 BF16, 2 Q4_0, 3 Q4_1, 6 Q5_0, 7 Q5_1, 8 Q8_0, 12 Q4_K, 13 Q5_K,
// 14 Q6_K), so each pipeline keeps one type's branch. The binding must cover
// the blocks' bytes rounded up to whole words.
//
// Words only: no 8- or 16-bit storage extension, so every driver runs it.
// Blocks are only 2-byte aligned (Q8_0 is 34 bytes, Q6_K 210), so bytes and
// halfwords are cut from words, and fp16 fields are converted in integer
// arithmetic (exact, subnormals kept, NaN made quiet as ggml's conversion).
#ifndef VKAMP_DEQUANT_GLSL
#define VKAMP_DEQUANT_GLSL

#ifndef QWORD
#error "define QWORD(w) (word w of the quantized binding) before including dequant.glsl"
#endif

layout(constant_id = 20) const uint QTYPE = 8;

uint dq_byte(uint a) { return (QWORD(a >> 2u) >> ((a & 3u) * 8u)) & 0xFFu; }
// The halfword at even byte address a.
uint dq_half(uint a) { return (QWORD(a >> 2u) >> ((a & 2u) * 8u)) & 0xFFFFu; }
// The 32 bits at even byte address a (Q5_0's qh is only 2-byte aligned).
uint dq_u32(uint a) { return dq_half(a) | (dq_half(a + 2u) << 16); }
int dq_int8(uint a) { return int(dq_byte(a) << 24) >> 24; }

float dq_fp16(uint h) {
  uint sign = (h & 0x8000u) << 16;
  uint e = (h >> 10) & 31u;
  uint m = h & 0x3FFu;
  uint bits;
  if (e == 31u) {
    bits = 0x7F800000u | (m << 13) | (m != 0u ? 0x00400000u : 0u);
  } else if (e != 0u) {
    bits = ((e + 112u) << 23) | (m << 13);
  } else if (m == 0u) {
    bits = 0u;
  } else {
    // Subnormal: m * 2^-24, a normal fp32 led by m's top bit.
    uint top = uint(findMSB(m));
    bits = ((top + 103u) << 23) | ((m << (23u - top)) & 0x7FFFFFu);
  }
  return uintBitsToFloat(sign | bits);
}
float dq_fp16_at(uint a) { return dq_fp16(dq_half(a)); }

// Q4_0 / Q4_1 / Q5_x: value k < 16 in the low nibble of byte k, k >= 16 in
// the high nibble of byte k - 16.
uint dq_nibble(uint qs, uint k) { return k < 16u ? dq_byte(qs + k) & 0xFu : dq_byte(qs + k - 16u) >> 4; }

// Vulkan rounds fp32 products, sums and int-to-float conversions
// correctly, so the same operations in the same order give ggml's bits.
// Those that ggml rounds one at a time and a driver could fuse (d * q + m
// into one fma: one rounding) are `precise`. No result is an fp32
// subnormal a driver might flush: fp16 scales are multiples of 2^-24, and
// so is every product and difference of them with integer codes.
float dq_q4_0(uint b, uint k) { return float(int(dq_nibble(b + 2u, k)) - 8) * dq_fp16_at(b); }

float dq_q4_1(uint b, uint k) {
  precise float r = float(dq_nibble(b + 4u, k)) * dq_fp16_at(b) + dq_fp16_at(b + 2u);
  return r;
}

// Q5_0 / Q5_1: bit k of the 32-bit qh is value k's fifth bit.
float dq_q5_0(uint b, uint k) {
  uint high = ((dq_u32(b + 2u) >> k) & 1u) << 4;
  return float(int(dq_nibble(b + 6u, k) | high) - 16) * dq_fp16_at(b);
}

float dq_q5_1(uint b, uint k) {
  uint high = ((dq_u32(b + 4u) >> k) & 1u) << 4;
  precise float r = float(dq_nibble(b + 8u, k) | high) * dq_fp16_at(b) + dq_fp16_at(b + 2u);
  return r;
}

float dq_q8_0(uint b, uint k) { return float(dq_int8(b + 2u + k)) * dq_fp16_at(b); }

// Q4_K / Q5_K: d, dmin, 12 bytes of 6-bit scales and mins (sub-block j < 4
// in the low 6 bits of bytes j and j + 4; j >= 4 in the nibbles of byte
// j + 4, top bits in the high 2 bits of bytes j - 4 and j), then codes: each
// 64 values share 32 bytes, the first 32 in the low nibbles. ggml computes
// (d * scale) * q - (dmin * min), each operation rounded: dq_k_scale gives
// (d * scale, dmin * min) of sub-block k / 32, dq_k_apply the rest.
vec2 dq_k_scale(uint b, uint k) {
  uint j = k / 32u, s = b + 4u;
  uint sc, mn;
  if (j < 4u) {
    sc = dq_byte(s + j) & 63u;
    mn = dq_byte(s + j + 4u) & 63u;
  } else {
    sc = (dq_byte(s + j + 4u) & 0xFu) | ((dq_byte(s + j - 4u) >> 6) << 4);
    mn = (dq_byte(s + j + 4u) >> 4) | ((dq_byte(s + j) >> 6) << 4);
  }
  precise float d1 = dq_fp16_at(b) * float(sc);
  precise float m1 = dq_fp16_at(b + 2u) * float(mn);
  return vec2(d1, m1);
}
float dq_k_apply(vec2 dm, uint q) {
  precise float r = dm.x * float(q) - dm.y;
  return r;
}

uint dq_k_nibble(uint qs, uint k) {
  uint byte = dq_byte(qs + 32u * (k / 64u) + k % 32u);
  return ((k / 32u) & 1u) != 0u ? byte >> 4 : byte & 0xFu;
}

uint dq_q4_k_code(uint b, uint k) { return dq_k_nibble(b + 16u, k); }
// Q5_K: after the scales 32 bytes of fifth bits (bit k / 32 of byte k % 32).
uint dq_q5_k_code(uint b, uint k) {
  uint high = (dq_byte(b + 16u + k % 32u) >> (k / 32u)) & 1u;
  return dq_k_nibble(b + 48u, k) + 16u * high;
}

// Q6_K: ql[128], qh[64], int8 scales[16], d at byte 208. Each 128 values
// use 64 bytes of ql and 32 of qh; quarter p of them the low (p < 2) or high
// nibbles of ql[l + 32 (p odd)] and bits 2p, 2p + 1 of qh[l]. ggml: (d * scale) * q,
// the scale one per 16 values.
int dq_q6_k_code(uint b, uint k) {
  uint c = k / 128u, p = (k % 128u) / 32u, l = k % 32u;
  uint low_byte = dq_byte(b + 64u * c + l + 32u * (p & 1u));
  uint low = p < 2u ? low_byte & 0xFu : low_byte >> 4;
  uint high = (dq_byte(b + 128u + 32u * c + l) >> (2u * p)) & 3u;
  return int(low | (high << 4)) - 32;
}
float dq_q6_k_scale(uint b, uint k) {
  precise float ds = dq_fp16_at(b + 208u) * float(dq_int8(b + 192u + k / 16u));
  return ds;
}
float dq_q6_k_apply(float ds, int q) {
  precise float r = ds * float(q);
  return r;
}

// The k-quants' scales hold for QGROUP consecutive values (0: the type has
// none to keep): a reader walking along a row looks them up once a group
// (quant_scale) and applies them to each value (quant_scaled), with the
// same bits as quant_value.
const uint QGROUP = QTYPE == 12u || QTYPE == 13u ? 32u : QTYPE == 14u ? 16u : 0u;
// A k-quant's super-block of 256 values: its bytes (Q4_K 144, Q5_K 176, Q6_K 210).
const uint QK_BYTES = QTYPE == 12u ? 144u : QTYPE == 13u ? 176u : 210u;
vec2 quant_scale(uint i) {
  if (QTYPE == 14u) return vec2(dq_q6_k_scale((i / 256u) * QK_BYTES, i % 256u), 0.0);
  return dq_k_scale((i / 256u) * QK_BYTES, i % 256u);
}
float quant_scaled(uint i, vec2 scale) {
  if (QTYPE == 12u) return dq_k_apply(scale, dq_q4_k_code((i / 256u) * QK_BYTES, i % 256u));
  if (QTYPE == 13u) return dq_k_apply(scale, dq_q5_k_code((i / 256u) * QK_BYTES, i % 256u));
  return dq_q6_k_apply(scale.x, dq_q6_k_code((i / 256u) * QK_BYTES, i % 256u));
}

float quant_value(uint i) {
  if (QTYPE == 0u) return uintBitsToFloat(QWORD(i));
  if (QTYPE == 1u) return dq_fp16_at(i * 2u);
  if (QTYPE == 30u) return uintBitsToFloat(dq_half(i * 2u) << 16);
  if (QTYPE == 2u) return dq_q4_0((i / 32u) * 18u, i % 32u);
  if (QTYPE == 3u) return dq_q4_1((i / 32u) * 20u, i % 32u);
  if (QTYPE == 6u) return dq_q5_0((i / 32u) * 22u, i % 32u);
  if (QTYPE == 7u) return dq_q5_1((i / 32u) * 24u, i % 32u);
  if (QTYPE == 8u) return dq_q8_0((i / 32u) * 34u, i % 32u);
  if (QGROUP != 0u) return quant_scaled(i, quant_scale(i));
  return uintBitsToFloat(0x7FC00000u);  // a type vkamp does not read: NaN
}

#endif
