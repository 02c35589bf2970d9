// The activations' formulas, shared by activation.comp and the epilogue of
// gemm.comp. Codes (ops::Activation on the host): 0 none (the GEMM's
// plain store), 1 ReLU, 2 GELU (tanh approximation), 3 tanh.
// GELU and tanh run in fp32, where exp cannot overflow into NaN for
// ordinary inputs. Needs nonfinite.glsl, included before any code.
#ifndef VKAMP_ACTIVATION_FN_GLSL
#define VKAMP_ACTIVATION_FN_GLSL

const uint ACT_NONE = 0u, ACT_RELU = 1u, ACT_GELU = 2u, ACT_TANH = 3u;

// max(v, 0) that keeps a NaN, in any float type (activation.comp runs it in
// the arithmetic type). The NaN is found on the bits: without the
// SignedZeroInfNanPreserve mode a compiler may turn any comparison-and-select
// form into max(v, 0), which returns 0 for NaN on NVIDIA.
#define RELU(v, zero) (is_nan_bits(v) ? (v) : ((v) > (zero) ? (v) : (zero)))

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

const float kGeluC = 0.7978845608028654;  // sqrt(2 / pi)
const float kGeluA = 0.044715;

float gelu_u(float v) { return kGeluC * (v + kGeluA * v * v * v); }

float gelu(float v) {
  if (is_inf_bits(v)) return v > 0.0 ? v : 0.0;
  return 0.5 * v * tanh_parts(gelu_u(v)).one_plus_t;
}
float gelu_grad(float v) {
  if (is_inf_bits(v)) return v > 0.0 ? 1.0 : 0.0;
  TanhParts p = tanh_parts(gelu_u(v));
  // sech2 is 0 long before v * v overflows (|v| > 11): the min() keeps a
  // 0 * inf = NaN out of large finite inputs.
  return 0.5 * p.one_plus_t + 0.5 * v * p.sech2 * kGeluC * (1.0 + 3.0 * kGeluA * min(v * v, 1e6));
}

// y = f(v) in fp32 for any code (ACT_NONE: v).
float activate(uint act, float v) {
  if (act == ACT_RELU) return RELU(v, 0.0);
  if (act == ACT_GELU) return gelu(v);
  if (act == ACT_TANH) return tanh_parts(v).t;
  return v;
}
// f'(v) for GELU and tanh (ReLU's backward is a select, not a product).
float activate_grad(uint act, float v) { return act == ACT_GELU ? gelu_grad(v) : tanh_parts(v).sech2; }

#endif
