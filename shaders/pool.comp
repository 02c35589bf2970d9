#version 450
#extension GL_GOOGLE_include_directive : require
// 2-D pooling forward, NHWC, no padding: one thread per output element.
// KIND 0, max: the largest value of the window, exact in every format; a
// window holding a NaN gives NaN (plain max() would drop it).
// KIND 1, average: the fp32 sum of value / window^2 over the window, rounded
// once to the format; dividing first keeps a window of values near fp32's
// or bf16's largest from overflowing the sum.
#include "types.glsl"
#include "nonfinite.glsl"
#include "elementwise.glsl"
#include "fastdiv.glsl"
#include "vkamp/gpu_abi/pool.h"

layout(constant_id = 0) const uint KIND = 0;

layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) writeonly buffer Y { sfp y[]; };

void main() {
  FOR_EACH_ELEMENT(i, p.n) {
    uint r = fast_div(i, p.by_channels), c = i - r * p.channels;
    uint r2 = fast_div(r, p.by_out_w), ox = r - r2 * p.out_w;
    uint b = fast_div(r2, p.by_out_h), oy = r2 - b * p.out_h;
    uint base = ((b * p.in_h + oy * p.stride) * p.in_w + ox * p.stride) * p.channels + c;
    float inv = 1.0 / float(p.window * p.window);
    float acc = KIND == 0u ? sfp2f(x[base]) : 0.0;
    bool nan_seen = false;
    for (uint ky = 0u; ky < p.window; ++ky)
      for (uint kx = 0u; kx < p.window; ++kx) {
        float v = sfp2f(x[base + (ky * p.in_w + kx) * p.channels]);
        if (KIND == 0u) {
          nan_seen = nan_seen || is_nan_bits(v);
          acc = v > acc ? v : acc;
        } else {
          acc += v * inv;
        }
      }
    if (KIND == 0u && nan_seen) acc = uintBitsToFloat(0x7FC00000u);
    y[i] = f2sfp(acc);
  }
}
