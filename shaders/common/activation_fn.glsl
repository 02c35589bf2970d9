// The activations' formulas, shared by activation.comp and the GEMM's
// epilogue (gemm_common.glsl, gemm_reduce.comp). The activations and their
// codes are listed once, in vkamp/gpu_abi/activation_list.h (engine/include,
// shared with the host): each has act_<name>(v) and act_<name>_grad(v) here,
// in fp32, and activate() and activate_grad() pick one by its ACT_* code
// (ACT_NONE, 0: the GEMM's plain store). Every exp takes a non-positive
// argument, so none overflows into inf * 0 = NaN; an inf input is handled
// on its bits. Needs nonfinite.glsl, included before any code.
#ifndef VKAMP_ACTIVATION_FN_GLSL
#define VKAMP_ACTIVATION_FN_GLSL

#include "vkamp/gpu_abi/activation_list.h"

const uint ACT_NONE = 0u;
#define VKAMP_ACTIVATION_CODE(Enumerator, SHADER_NAME, code, name, letter) const uint ACT_##SHADER_NAME = code;
VKAMP_ACTIVATIONS(VKAMP_ACTIVATION_CODE)
#undef VKAMP_ACTIVATION_CODE

// max(v, 0) that keeps a NaN, in any float type (activation.comp runs it in
// the arithmetic type). The NaN is found on the bits: without the
// SignedZeroInfNanPreserve mode a compiler may turn any comparison-and-select
// form into max(v, 0), which returns 0 for NaN on NVIDIA.
#define RELU(v, zero) (is_nan_bits(v) ? (v) : ((v) > (zero) ? (v) : (zero)))

// ReLU. activation.comp runs both directions in the arithmetic type itself
// (RELU, and a select of dy for the backward): act_relu serves the GEMM's
// epilogue, and act_relu_grad only completes the list.
float act_relu(float v) { return RELU(v, 0.0); }
float act_relu_grad(float v) { return is_nan_bits(v) ? v : (v > 0.0 ? 1.0 : 0.0); }

// tanh(u) and the pieces the derivatives need, all from e = exp(-2|u|),
// which cannot overflow (inf gives e = 0; NaN stays NaN), written so that
// none cancels where it is small:
//   tanh(u) = sign(u) (1 - e) / (1 + e), its Taylor series near 0 (1 - e cancels);
//   1 + tanh(u) = 2 / (1 + e) for u >= 0, 2e / (1 + e) for u < 0;
//   1 - tanh(u)^2 = 4e / (1 + e)^2.
struct TanhParts {
  float t, one_plus_t, sech2;
};
TanhParts tanh_parts(float u) {
  float a = abs(u), a2 = a * a, e = exp(-2.0 * a);
  float r = a < 0.25 ? a * (1.0 + a2 * (-1.0 / 3.0 + a2 * (2.0 / 15.0 + a2 * (-17.0 / 315.0 + a2 * (62.0 / 2835.0)))))
                     : (1.0 - e) / (1.0 + e);
  TanhParts p;
  p.t = u < 0.0 ? -r : (u >= 0.0 ? r : u);
  p.one_plus_t = (u < 0.0 ? 2.0 * e : 2.0) / (1.0 + e);
  p.sech2 = 4.0 * e / ((1.0 + e) * (1.0 + e));
  return p;
}

float act_tanh(float v) { return tanh_parts(v).t; }
float act_tanh_grad(float v) { return tanh_parts(v).sech2; }

// GELU, the tanh approximation: 0.5 v (1 + tanh(u)), u = c (v + a v^3).
const float kGeluC = 0.7978845608028654;  // sqrt(2 / pi)
const float kGeluA = 0.044715;

float gelu_u(float v) { return kGeluC * (v + kGeluA * v * v * v); }

float act_gelu(float v) {
  if (is_inf_bits(v)) return v > 0.0 ? v : 0.0;
  return 0.5 * v * tanh_parts(gelu_u(v)).one_plus_t;
}
float act_gelu_grad(float v) {
  if (is_inf_bits(v)) return v > 0.0 ? 1.0 : 0.0;
  TanhParts p = tanh_parts(gelu_u(v));
  // sech2 is 0 long before v * v overflows (|v| > 11): the min() keeps a
  // 0 * inf = NaN out of large finite inputs.
  return 0.5 * p.one_plus_t + 0.5 * v * p.sech2 * kGeluC * (1.0 + 3.0 * kGeluA * min(v * v, 1e6));
}

// s = sigmoid(v) = 1 / (1 + e^-v) and 1 - s, from e = exp(-|v|) in (0, 1]
// (0 at +-inf, taken on the bits): 1 / (1 + e) and e / (1 + e), whichever
// side of 0 v is on, so neither overflows nor cancels. -|v| can reach
// exp's underflow (|v| > 87 in fp32): e, s and 1 - s then go to 0 (or a
// subnormal), never to NaN.
struct SigmoidParts {
  float s, one_minus_s;
};
SigmoidParts sigmoid_parts(float v) {
  float e = is_inf_bits(v) ? 0.0 : exp(-abs(v)), r = 1.0 / (1.0 + e);
  SigmoidParts p;
  p.s = v < 0.0 ? e * r : r;
  p.one_minus_s = v < 0.0 ? r : e * r;
  return p;
}

// A NaN v is returned on its bits (sigmoid_parts compares v with 0).
float act_sigmoid(float v) { return is_nan_bits(v) ? v : sigmoid_parts(v).s; }
float act_sigmoid_grad(float v) {
  SigmoidParts p = sigmoid_parts(v);
  return is_nan_bits(v) ? v : p.s * p.one_minus_s;
}

// SiLU(v) = v s, SiLU'(v) = s (1 + v (1 - s)). At +-inf they are what
// PyTorch computes: SiLU(inf) = inf, SiLU(-inf) = -inf * 0 = NaN, and SiLU'
// is NaN at both (v (1 - s) is inf * 0); chosen on the bits. For finite v,
// v (1 - s) is finite: 1 - s <= 1, and it is 0 where |v| is large and positive.
float act_silu(float v) {
  if (is_nan_bits(v)) return v;
  if (is_inf_bits(v)) return v > 0.0 ? v : quiet_nan();
  return v * sigmoid_parts(v).s;
}
float act_silu_grad(float v) {
  if (is_nan_bits(v)) return v;
  if (is_inf_bits(v)) return quiet_nan();
  SigmoidParts p = sigmoid_parts(v);
  return p.s * (1.0 + v * p.one_minus_s);
}

// y = f(v) in fp32 for any code (ACT_NONE: v). ACT is a specialization
// constant in every caller: the chain folds to one call.
float activate(uint act, float v) {
#define VKAMP_ACTIVATION_CALL(Enumerator, SHADER_NAME, code, name, letter) \
  if (act == ACT_##SHADER_NAME) return act_##name(v);
  VKAMP_ACTIVATIONS(VKAMP_ACTIVATION_CALL)
#undef VKAMP_ACTIVATION_CALL
  return v;
}
// f'(v) for any code but ACT_NONE.
float activate_grad(uint act, float v) {
#define VKAMP_ACTIVATION_GRAD_CALL(Enumerator, SHADER_NAME, code, name, letter) \
  if (act == ACT_##SHADER_NAME) return act_##name##_grad(v);
  VKAMP_ACTIVATIONS(VKAMP_ACTIVATION_GRAD_CALL)
#undef VKAMP_ACTIVATION_GRAD_CALL
  return 1.0;
}

#endif
