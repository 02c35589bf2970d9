#version 450
#extension GL_GOOGLE_include_directive : require
// LayerNorm over the last dimension, y = (x - mean) * rstd * gamma + beta
// with rstd = 1 / sqrt(var + eps), var the biased variance (as PyTorch);
// with p.centered 0, RMSNorm (Llama's): y = x * rstd * gamma with
// rstd = 1 / sqrt(mean(x^2) + eps), no mean taken out and no beta read.
// A workgroup or an invocation per row (row_sum.glsl); everything in fp32
// whatever the storage format.
//
// The mean and variance are two-pass with a correction (Chan, Golub and
// LeVeque's "corrected two-pass"): m = sum(x) / C, then d = x - m, which is
// exact when m is near x (Sterbenz), and mean = m + sum(d) / C,
// var = sum(d^2) / C - (sum(d) / C)^2. The correction removes the rounding
// error of the first sum; the subtraction cannot cancel badly since sum(d)
// is that small error. E[x^2] - E[x]^2 would lose everything at x ~ 1000.
// y uses (d - sum(d) / C) rather than x - mean, so a row far from zero
// keeps the accuracy that storing mean in fp32 would cost.
// Saves (mean, rstd) per row, fp32, for the backward (RMSNorm: mean 0).
#include "types.glsl"
#include "row_sum.glsl"

layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) readonly buffer Gamma { sfp gamma[]; };
layout(std430, binding = 2) readonly buffer Beta { sfp beta[]; };
layout(std430, binding = 3) writeonly buffer Y { sfp y[]; };
layout(std430, binding = 4) writeonly buffer Stats { vec2 mean_rstd[]; };
#include "vkamp/gpu_abi/layer_norm.h"

void main() {
  uint lid = row_lane();
  float inv_c = 1.0 / float(p.cols);
  FOR_EACH_ROW(r, p.rows) {
    uint base = r * p.cols;
    float m = 0.0;
    if (p.centered != 0u) {
      float s = 0.0;
      for (uint c = lid; c < p.cols; c += kRowThreads) s += sfp2f(x[base + c]);
      m = row_sum(vec2(s, 0.0)).x * inv_c;
    }
    vec2 sd = vec2(0.0);
    for (uint c = lid; c < p.cols; c += kRowThreads) {
      float d = sfp2f(x[base + c]) - m;
      sd += vec2(d, d * d);
    }
    sd = row_sum(sd) * inv_c;
    float shift = p.centered != 0u ? sd.x : 0.0;  // mean - m
    float rstd = inversesqrt(sd.y - shift * shift + p.eps);
    for (uint c = lid; c < p.cols; c += kRowThreads) {
      float xhat = (sfp2f(x[base + c]) - m - shift) * rstd;
      // RMSNorm adds no 0.0 for its missing beta: -0 stays -0.
      y[base + c] = f2sfp(p.centered != 0u ? xhat * sfp2f(gamma[c]) + sfp2f(beta[c]) : xhat * sfp2f(gamma[c]));
    }
    if (lid == 0u) mean_rstd[r] = vec2(m + shift, rstd);
  }
}
