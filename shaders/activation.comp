#version 450
#extension GL_GOOGLE_include_directive : require
// Activations, forward (y = f(x)) and backward (dx = dy * f'(x)).
// ACT: 0 ReLU, 1 GELU (tanh approximation), 2 tanh. ReLU stays in the
// arithmetic type; GELU and tanh run in fp32, where exp cannot overflow
// into NaN for ordinary inputs.
#include "types.glsl"
#include "elementwise.glsl"

layout(constant_id = 0) const uint ACT = 0;
layout(constant_id = 1) const uint BACKWARD = 0;

layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) readonly buffer DY { sfp dy[]; };
layout(std430, binding = 2) writeonly buffer Out { sfp outv[]; };
layout(push_constant) uniform Push { uint n; } p;

// tanh without exp overflow: inf maps to +-1, NaN stays NaN.
float safe_tanh(float v) {
  float t = exp(-2.0 * abs(v));
  float r = (1.0 - t) / (1.0 + t);
  return v < 0.0 ? -r : (v >= 0.0 ? r : v);
}

const float kGeluC = 0.7978845608028654;  // sqrt(2 / pi)
const float kGeluA = 0.044715;

float gelu(float v) {
  if (isinf(v)) return v > 0.0 ? v : 0.0;
  return 0.5 * v * (1.0 + safe_tanh(kGeluC * (v + kGeluA * v * v * v)));
}
float gelu_grad(float v) {
  if (isinf(v)) return v > 0.0 ? 1.0 : 0.0;
  float u = kGeluC * (v + kGeluA * v * v * v);
  float t = safe_tanh(u);
  return 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * kGeluC * (1.0 + 3.0 * kGeluA * v * v);
}

void main() {
  FOR_EACH_ELEMENT(i, p.n) {
    if (ACT == 0u) {
      afp v = sfp2afp(x[i]);
      // NaN compares false both ways: keep it, in either direction.
      if (BACKWARD == 0u) outv[i] = afp2sfp(v > afp(0) ? v : (v <= afp(0) ? afp(0) : v));
      else {
        afp g = sfp2afp(dy[i]);
        outv[i] = afp2sfp(v > afp(0) ? g : (v <= afp(0) ? g * afp(0) : v));
      }
    } else {
      float v = sfp2f(x[i]);
      float r;
      if (BACKWARD == 0u) r = ACT == 1u ? gelu(v) : safe_tanh(v);
      else {
        float t = safe_tanh(v);
        float d = ACT == 1u ? gelu_grad(v) : 1.0 - t * t;
        r = sfp2f(dy[i]) * d;
      }
      outv[i] = f2sfp(r);
    }
  }
}
