#version 450
#extension GL_GOOGLE_include_directive : require
// MSE backward: dy = 2 (y - t) / n * scale[0], in fp32 (the loss scale is
// read from a GPU buffer). The forward is sumsq.comp with a target.
#include "types.glsl"
#include "elementwise.glsl"

layout(std430, binding = 0) readonly buffer Y { sfp y[]; };
layout(std430, binding = 1) readonly buffer T { sfp t[]; };
layout(std430, binding = 2) readonly buffer Scale { float scale[]; };
layout(std430, binding = 3) writeonly buffer DY { sfp dy[]; };
#include "vkamp/gpu_abi/mse_grad.h"

void main() {
  // Doubling is exact and scale / n comes last: nothing overflows on the
  // way to a finite result (2 * scale would, for a scale of 2^127).
  float k = scale[0] / float(p.n);
  FOR_EACH_ELEMENT(i, p.n) dy[i] = f2sfp((sfp2f(y[i]) - sfp2f(t[i])) * 2.0 * k);
}
