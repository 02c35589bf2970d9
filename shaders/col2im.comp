#version 450
#extension GL_GOOGLE_include_directive : require
// The adjoint of im2col: dx[n,y,x,ci] = sum of dcol[(n,oy,ox), (ky,kx,ci)]
// over every (oy,ox,ky,kx) with oy*s+ky-p = y and ox*s+kx-p = x, the
// entries im2col copied x[n,y,x,ci] to. A gather, one thread per dx
// element: no atomics, a fixed order (oy, then ox, ascending), fp32 sum,
// one rounding to the format. An input no window reaches gets 0.
#include "types.glsl"
#include "elementwise.glsl"
#include "fastdiv.glsl"
#include "vkamp/gpu_abi/conv.h"

layout(std430, binding = 0) readonly buffer DCol { sfp dcol[]; };
layout(std430, binding = 1) writeonly buffer DX { sfp dx[]; };

// The outputs o (along one axis) whose window covers padded position q =
// pos + pad: o*s <= q <= o*s + kernel - 1, and o < out. Empty when lo > hi.
void window_range(uint q, uint out_len, out uint lo, out uint hi) {
  lo = q + 1u > p.kernel ? fast_div(q + p.stride - p.kernel, p.by_stride) : 0u;
  hi = min(fast_div(q, p.by_stride), out_len - 1u);
}

void main() {
  uint patch_len = p.kernel * p.kernel * p.in_c;
  FOR_EACH_ELEMENT(i, p.n) {
    uint r = fast_div(i, p.by_in_c), ci = i - r * p.in_c;
    uint r2 = fast_div(r, p.by_in_w), xx = r - r2 * p.in_w;
    uint b = fast_div(r2, p.by_in_h), y = r2 - b * p.in_h;
    uint qy = y + p.pad, qx = xx + p.pad;
    uint oy0, oy1, ox0, ox1;
    window_range(qy, p.out_h, oy0, oy1);
    window_range(qx, p.out_w, ox0, ox1);
    float s = 0.0;
    for (uint oy = oy0; oy <= oy1; ++oy) {
      uint ky = qy - oy * p.stride;
      uint row0 = (b * p.out_h + oy) * p.out_w;
      for (uint ox = ox0; ox <= ox1; ++ox) {
        uint kx = qx - ox * p.stride;
        s += sfp2f(dcol[(row0 + ox) * patch_len + (ky * p.kernel + kx) * p.in_c + ci]);
      }
    }
    dx[i] = f2sfp(s);
  }
}
