// Every inf/NaN decision goes through these helpers. They test the exponent
// bits, which no compiler may fold: SPIR-V lets a driver assume no inf/NaN
// and no -0 in float arithmetic unless the SignedZeroInfNanPreserve
// execution mode is set, so isnan/isinf may become `false`, a comparison
// with NaN may give either answer, and `v > 0 ? v : 0` may become
// max(v, 0), whose NaN result is unspecified. Where the device offers the
// mode, Kernel adds it to every module (engine/src/spirv_float_controls.cpp);
// the shaders must be right without it too. The rule, for every shader:
// - a result that must be NaN when an input is NaN (ReLU, max, clamps, the
//   pooling's window maximum, the epilogue) is chosen by is_nan_bits, never
//   by a comparison alone;
// - an inf/NaN check uses is_nonfinite / is_inf_bits / is_nan_bits;
// - a sign of zero that a result must keep comes from integer ops (0.0 + t
//   may fold to t).
// VKAMP_INF_NAN_PRESERVE=0 runs every kernel without the mode (tests).
#ifndef VKAMP_NONFINITE_GLSL
#define VKAMP_NONFINITE_GLSL

// All exponent bits set: inf (mantissa 0) or NaN (any other mantissa).
bool is_nonfinite(float v) { return (floatBitsToUint(v) & 0x7F800000u) == 0x7F800000u; }
bool is_nan_bits(float v) { return (floatBitsToUint(v) & 0x7FFFFFFFu) > 0x7F800000u; }
bool is_inf_bits(float v) { return (floatBitsToUint(v) & 0x7FFFFFFFu) == 0x7F800000u; }
#if defined(VKAMP_FP16)
// On the fp16 bits themselves (a bitcast, no conversion for a compiler to
// assume NaN-free).
uint fp16_bits(float16_t v) { return packFloat2x16(f16vec2(v, float16_t(0.0))) & 0xFFFFu; }
bool is_nonfinite(float16_t v) { return (fp16_bits(v) & 0x7C00u) == 0x7C00u; }
bool is_nan_bits(float16_t v) { return (fp16_bits(v) & 0x7FFFu) > 0x7C00u; }
bool is_inf_bits(float16_t v) { return (fp16_bits(v) & 0x7FFFu) == 0x7C00u; }
#endif

// The quiet NaN every shader writes where it makes a NaN, and what a NaN
// result is turned into where two code paths must give the same bits:
// drivers differ in the NaN an operation on NaN returns (NVIDIA gives
// 0x7FFFFFFF for 0.0 + NaN, x86 keeps the operand's payload).
const uint kQuietNanBits = 0x7FC00000u;
float quiet_nan() { return uintBitsToFloat(kQuietNanBits); }
float canonical_nan(float v) { return is_nan_bits(v) ? quiet_nan() : v; }

// 2^e exactly, built from bits; 0 below the normal range (used for
// rescaling sums, where such a term is negligible), e <= 127.
float pow2i(int e) { return e < -126 ? 0.0 : uintBitsToFloat(uint(e + 127) << 23); }

#endif
