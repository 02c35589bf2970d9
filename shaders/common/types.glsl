// Storage and arithmetic types for one shader source at every format
// (after ncnn's sfp/afp). The build defines exactly one of:
//   VKAMP_FP32   fp32 storage, fp32 arithmetic
//   VKAMP_FP16   fp16 storage, fp16 arithmetic (needs shaderFloat16)
//   VKAMP_FP16S  fp16 storage, fp32 arithmetic (the fallback without shaderFloat16)
//   VKAMP_BF16   bfloat16 bit patterns, fp32 arithmetic
//   VKAMP_CB16   Cerebras cbfloat16 (1-6-9, bias 31) bit patterns, fp32 arithmetic
// Shaders declare buffers of `sfp`, compute in `afp`, and accumulate sums in
// `float` whatever the format. Conversions to 16 bits round to nearest even,
// keep inf and NaN, and turn values past the format's range into inf.
#ifndef VKAMP_TYPES_GLSL
#define VKAMP_TYPES_GLSL

#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#if defined(VKAMP_FP16)
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#include "float_bits.glsl"

// sfp2f / f2sfp are macros, not functions, so a 16-bit value only ever
// appears inside a load or store: that needs 16-bit storage, never the
// Int16 capability. Store f2sfp() straight into a buffer, never into a local.
#if defined(VKAMP_FP32)
  #define sfp float
  #define afp float
  #define sfp2f(v) (v)
  #define f2sfp(v) (v)
#elif defined(VKAMP_FP16)
  #define sfp float16_t
  #define afp float16_t
  #define sfp2f(v) float(v)
  // Rounded in integer code (OpFConvert's rounding mode is the driver's
  // choice); the exact result then converts to fp16 without rounding.
  #define f2sfp(v) float16_t(unpackHalf2x16(f32_to_fp16_bits(v)).x)
#elif defined(VKAMP_FP16S)
  // Without shaderFloat16 no fp16 value may live in a register, so the
  // buffer holds fp16 bit patterns; unpackHalf2x16 decodes exactly.
  #define sfp uint16_t
  #define afp float
  #define sfp2f(v) unpackHalf2x16(uint(v)).x
  #define f2sfp(v) uint16_t(f32_to_fp16_bits(v))
#elif defined(VKAMP_BF16)
  #define sfp uint16_t
  #define afp float
  #define sfp2f(v) bf16_bits_to_f32(uint(v))
  #define f2sfp(v) uint16_t(f32_to_bf16_bits(v))
#elif defined(VKAMP_CB16)
  #define sfp uint16_t
  #define afp float
  #define sfp2f(v) cb16_bits_to_f32(uint(v))
  #define f2sfp(v) uint16_t(f32_to_cb16_bits(v))
#else
  #error "define one of VKAMP_FP32 VKAMP_FP16 VKAMP_FP16S VKAMP_BF16 VKAMP_CB16"
#endif

// v rounded to the storage format, kept in fp32 (16-bit values stay out of
// registers here too): what f2sfp(v) stores and sfp2f reads back.
#if defined(VKAMP_FP32)
  #define round_to_sfp(v) (v)
#elif defined(VKAMP_FP16) || defined(VKAMP_FP16S)
  #define round_to_sfp(v) unpackHalf2x16(f32_to_fp16_bits(v)).x
#elif defined(VKAMP_BF16)
  #define round_to_sfp(v) bf16_bits_to_f32(f32_to_bf16_bits(v))
#elif defined(VKAMP_CB16)
  #define round_to_sfp(v) cb16_bits_to_f32(f32_to_cb16_bits(v))
#endif

// Load as arithmetic type / store from arithmetic type.
#if defined(VKAMP_FP16)
  #define sfp2afp(v) (v)
  #define afp2sfp(v) (v)
  #define f2afp(v) float16_t(v)
#else
  #define sfp2afp(v) sfp2f(v)
  #define afp2sfp(v) f2sfp(v)
  #define f2afp(v) (v)
#endif

#endif
