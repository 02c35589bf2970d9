#version 450
#extension GL_GOOGLE_include_directive : require
// LayerNorm's input gradient, a workgroup or an invocation per row, fp32:
//   g = dy * gamma, xhat = (x - mean) * rstd (mean and rstd saved by the forward),
//   dx = rstd * (g - mean_c(g) - xhat * mean_c(g * xhat))  (+ dx when accumulate);
// RMSNorm (p.centered 0, mean 0 saved) has no mean_c(g) term.
// The two row means come from one fixed-order sum (row_sum.glsl).
// g is `precise` (NoContraction), so that both loops round it alike: fused
// into g - mean_c(g) as fma(dy, gamma, -mean), the product would enter
// unrounded, and a row whose terms cancel exactly (one column: dx = 0)
// would keep the product's rounding error times rstd (1e-5 on NVIDIA).
#include "types.glsl"
#include "row_sum.glsl"

layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) readonly buffer Gamma { sfp gamma[]; };
layout(std430, binding = 2) readonly buffer Stats { vec2 mean_rstd[]; };
layout(std430, binding = 3) readonly buffer DY { sfp dy[]; };
layout(std430, binding = 4) buffer DX { sfp dx[]; };
#include "vkamp/gpu_abi/layer_norm_grad.h"

void main() {
  uint lid = row_lane();
  float inv_c = 1.0 / float(p.cols);
  FOR_EACH_ROW(r, p.rows) {
    uint base = r * p.cols;
    vec2 st = mean_rstd[r];
    vec2 s = vec2(0.0);
    for (uint c = lid; c < p.cols; c += kRowThreads) {
      precise float g = sfp2f(dy[base + c]) * sfp2f(gamma[c]);
      s += vec2(g, g * ((sfp2f(x[base + c]) - st.x) * st.y));
    }
    s = row_sum(s) * inv_c;
    for (uint c = lid; c < p.cols; c += kRowThreads) {
      precise float g = sfp2f(dy[base + c]) * sfp2f(gamma[c]);
      float xhat = (sfp2f(x[base + c]) - st.x) * st.y;
      float v = st.y * (g - (p.centered != 0u ? s.x : 0.0) - xhat * s.y);
      if (p.accumulate != 0u) v += sfp2f(dx[base + c]);
      dx[base + c] = f2sfp(v);
    }
  }
}
