#version 450
#extension GL_GOOGLE_include_directive : require
// col[(n,oy,ox), (ky,kx,ci)] = x[n, oy*s+ky-p, ox*s+kx-p, ci], 0 outside x
// (zero padding), NHWC. One thread per (output pixel, ky): in NHWC its
// kernel x in_c values are one contiguous run of x and of col, so a thread
// divides once and then copies a run. One thread per col element divided
// six times per element, and took twice as long on lavapipe
// (bench/NOTES.md). A plain copy of the stored bits: exact in every format,
// NaN payloads included.
#include "types.glsl"
#include "elementwise.glsl"
#include "fastdiv.glsl"
#include "vkamp/gpu_abi/conv.h"

layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) writeonly buffer Col { sfp col[]; };

void main() {
  uint run = p.kernel * p.in_c;
  FOR_EACH_ELEMENT(i, p.n) {  // p.n = output pixels * kernel
    uint row = fast_div(i, p.by_kernel), ky = i - row * p.kernel;
    uint r2 = fast_div(row, p.by_out_w), ox = row - r2 * p.out_w;
    uint b = fast_div(r2, p.by_out_h), oy = r2 - b * p.out_h;
    // Signed: a padded position is negative.
    int y = int(oy * p.stride + ky) - int(p.pad);
    int x0 = int(ox * p.stride) - int(p.pad);
    bool row_inside = y >= 0 && y < int(p.in_h);
    uint src_row = row_inside ? (b * p.in_h + uint(y)) * p.in_w : 0u;
    uint dst = i * run;  // = row * patch + ky * kernel * in_c
    for (uint kx = 0u; kx < p.kernel; ++kx) {
      int xx = x0 + int(kx);
      if (row_inside && xx >= 0 && xx < int(p.in_w)) {
        uint src = (src_row + uint(xx)) * p.in_c;
        for (uint ci = 0u; ci < p.in_c; ++ci) col[dst + ci] = x[src + ci];
      } else {
        for (uint ci = 0u; ci < p.in_c; ++ci) col[dst + ci] = f2sfp(0.0);
      }
      dst += p.in_c;
    }
  }
}
