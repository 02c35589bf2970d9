#version 450
#extension GL_GOOGLE_include_directive : require
// Copies a block of `width` columns between row-major matrices of different
// widths: dst[r, dst_off + c] (+)= src[r, src_off + c]. Concatenation along
// the feature axis is one such copy per input, and its backward one per
// input the other way (adding when that input's gradient already holds
// another consumer's contribution).
#include "types.glsl"
#include "elementwise.glsl"

layout(std430, binding = 0) readonly buffer Src { sfp src[]; };
layout(std430, binding = 1) buffer Dst { sfp dst[]; };
#include "vkamp/gpu_abi/concat.h"

void main() {
  FOR_EACH_ELEMENT(i, p.rows * p.width) {
    uint r = i / p.width, c = i % p.width;
    uint s = r * p.src_cols + p.src_off + c, d = r * p.dst_cols + p.dst_off + c;
    if (p.accumulate != 0u) dst[d] = afp2sfp(sfp2afp(dst[d]) + sfp2afp(src[s]));
    else dst[d] = src[s];
  }
}
