#version 450
#extension GL_GOOGLE_include_directive : require
// y = a + b elementwise, in the arithmetic type (one rounding). y may be a
// (a gradient summed into in place), so Y is not marked writeonly.
#include "types.glsl"
#include "elementwise.glsl"

layout(std430, binding = 0) readonly buffer A { sfp a[]; };
layout(std430, binding = 1) readonly buffer B { sfp b[]; };
layout(std430, binding = 2) buffer Y { sfp y[]; };
#include "vkamp/gpu_abi/add.h"

void main() {
  FOR_EACH_ELEMENT(i, p.n) y[i] = afp2sfp(sfp2afp(a[i]) + sfp2afp(b[i]));
}
