#version 450
#extension GL_GOOGLE_include_directive : require
// Activations, forward (y = f(x)) and backward (dx = dy * f'(x)).
// ACT: 0 ReLU, 1 GELU (tanh approximation), 2 tanh. ReLU stays in the
// arithmetic type; GELU and tanh run in fp32, where exp cannot overflow
// into NaN for ordinary inputs.
#include "types.glsl"
#include "nonfinite.glsl"
#include "elementwise.glsl"

layout(constant_id = 0) const uint ACT = 0;
layout(constant_id = 1) const uint BACKWARD = 0;

layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) readonly buffer DY { sfp dy[]; };
layout(std430, binding = 2) writeonly buffer Out { sfp outv[]; };
layout(push_constant) uniform Push { uint n; } p;

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

void main() {
  FOR_EACH_ELEMENT(i, p.n) {
    if (ACT == 0u) {
      afp v = sfp2afp(x[i]);
      // NaN compares false both ways: keep it, in either direction.
      if (BACKWARD == 0u) outv[i] = afp2sfp(v > afp(0) ? v : (v <= afp(0) ? afp(0) : v));
      else {
        afp g = sfp2afp(dy[i]);
        // An inf or NaN dy at x <= 0 gives NaN, never a hidden 0. Tested,
        // not computed as g * 0: compilers fold that to 0 (lavapipe does).
        afp blocked = is_nonfinite(g) ? afp(uintBitsToFloat(0x7FC00000u)) : afp(0);
        outv[i] = afp2sfp(v > afp(0) ? g : (v <= afp(0) ? blocked : v));
      }
    } else {
      float v = sfp2f(x[i]);
      float r;
      if (BACKWARD == 0u) r = ACT == 1u ? gelu(v) : tanh_parts(v).t;
      else r = sfp2f(dy[i]) * (ACT == 1u ? gelu_grad(v) : tanh_parts(v).sech2);
      outv[i] = f2sfp(r);
    }
  }
}
