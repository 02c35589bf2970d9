#version 450
#extension GL_GOOGLE_include_directive : require
// y[r, c] += b[c], in place, in the arithmetic type.
#include "types.glsl"
#include "elementwise.glsl"

layout(std430, binding = 0) buffer Y { sfp y[]; };
layout(std430, binding = 1) readonly buffer Bias { sfp bias[]; };
#include "vkamp/gpu_abi/bias_add.h"

void main() {
  FOR_EACH_ELEMENT(i, p.n) y[i] = afp2sfp(sfp2afp(y[i]) + sfp2afp(bias[i % p.cols]));
}
