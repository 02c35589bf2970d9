// Every inf/NaN decision goes through these helpers. They test the exponent
// bits, which no compiler may fold: SPIR-V lets a driver assume no inf/NaN in
// float arithmetic (so isnan/isinf may become `false`) unless the
// SignedZeroInfNanPreserve execution mode is set. Where the device reports
// shaderSignedZeroInfNanPreserveFloat32, the host picks the ".preserve"
// variant of the decision shaders, built with VKAMP_INF_NAN_PRESERVE, which
// sets that mode for 32-bit floats too (the decisions are all made in fp32).
// Include it before any code: it may declare an extension.
#ifndef VKAMP_NONFINITE_GLSL
#define VKAMP_NONFINITE_GLSL

#if defined(VKAMP_INF_NAN_PRESERVE)
#extension GL_EXT_spirv_intrinsics : require
// ExecutionMode SignedZeroInfNanPreserve = 4461 with target width 32;
// Capability SignedZeroInfNanPreserve = 4466 (SPIR-V spec 3.6 and 3.31).
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4466], 4461, 32);
#endif

// All exponent bits set: inf (mantissa 0) or NaN (any other mantissa).
bool is_nonfinite(float v) { return (floatBitsToUint(v) & 0x7F800000u) == 0x7F800000u; }
bool is_nan_bits(float v) { return (floatBitsToUint(v) & 0x7FFFFFFFu) > 0x7F800000u; }
bool is_inf_bits(float v) { return (floatBitsToUint(v) & 0x7FFFFFFFu) == 0x7F800000u; }
#if defined(VKAMP_FP16)
// fp16 -> fp32 is exact and keeps inf and NaN.
bool is_nonfinite(float16_t v) { return is_nonfinite(float(v)); }
bool is_nan_bits(float16_t v) { return is_nan_bits(float(v)); }
bool is_inf_bits(float16_t v) { return is_inf_bits(float(v)); }
#endif

// 2^e exactly, built from bits; 0 below the normal range (used for
// rescaling sums, where such a term is negligible), e <= 127.
float pow2i(int e) { return e < -126 ? 0.0 : uintBitsToFloat(uint(e + 127) << 23); }

#endif
