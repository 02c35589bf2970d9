#version 450
#extension GL_GOOGLE_include_directive : require
// Direct convolution forward, NHWC, for comparison with im2col + GEMM
// (vkamp-bench conv; bench/NOTES.md): one thread per output element
// y[n,oy,ox,o] = b[o] + sum over (ky,kx,ci) of x[n, oy*s+ky-p, ox*s+kx-p, ci]
// w[o,ky,kx,ci], summed in fp32 (the bias too) and rounded once. Padding
// taps are skipped rather than multiplied by 0, so an inf weight does not
// turn into NaN there as it does through im2col's zeros.
#include "types.glsl"
#include "elementwise.glsl"
#include "fastdiv.glsl"

layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) readonly buffer W { sfp w[]; };
layout(std430, binding = 2) readonly buffer B { sfp bias[]; };
layout(std430, binding = 3) writeonly buffer Y { sfp y[]; };
#include "vkamp/gpu_abi/conv_direct.h"

void main() {
  uint patch_len = p.kernel * p.kernel * p.in_c;
  FOR_EACH_ELEMENT(i, p.n) {
    uint r = fast_div(i, p.by_out_c), o = i - r * p.out_c;
    uint r2 = fast_div(r, p.by_out_w), ox = r - r2 * p.out_w;
    uint b = fast_div(r2, p.by_out_h), oy = r2 - b * p.out_h;
    float acc = 0.0;
    for (uint ky = 0u; ky < p.kernel; ++ky) {
      int yy = int(oy * p.stride + ky) - int(p.pad);
      if (yy < 0 || yy >= int(p.in_h)) continue;
      for (uint kx = 0u; kx < p.kernel; ++kx) {
        int xx = int(ox * p.stride + kx) - int(p.pad);
        if (xx < 0 || xx >= int(p.in_w)) continue;
        uint xbase = ((b * p.in_h + uint(yy)) * p.in_w + uint(xx)) * p.in_c;
        uint wbase = o * patch_len + (ky * p.kernel + kx) * p.in_c;
        for (uint ci = 0u; ci < p.in_c; ++ci) acc = fma(sfp2f(x[xbase + ci]), sfp2f(w[wbase + ci]), acc);
      }
    }
    y[i] = f2sfp(acc + sfp2f(bias[o]));
  }
}
