#version 450
#extension GL_GOOGLE_include_directive : require
// col[(n,oy,ox), (ky,kx,ci)] = x[n, oy*s+ky-p, ox*s+kx-p, ci], 0 outside x
// (zero padding), NHWC. One thread per col element, in col's order, so the
// stores are contiguous and each thread's load neighbours its neighbours'
// (ci is the fastest index of both). A plain copy of the stored bits: exact
// in every format, NaN payloads included.
#include "types.glsl"
#include "elementwise.glsl"
#include "fastdiv.glsl"
#include "conv_push.glsl"

layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) writeonly buffer Col { sfp col[]; };

void main() {
  uint patch_len = p.kernel * p.kernel * p.in_c;
  FOR_EACH_ELEMENT(i, p.n) {
    uint row = fast_div(i, p.by_patch), k = i - row * patch_len;
    uint kk = fast_div(k, p.by_in_c), ci = k - kk * p.in_c;
    uint ky = fast_div(kk, p.by_kernel), kx = kk - ky * p.kernel;
    uint r2 = fast_div(row, p.by_out_w), ox = row - r2 * p.out_w;
    uint b = fast_div(r2, p.by_out_h), oy = r2 - b * p.out_h;
    // Signed: a padded position is negative.
    int y = int(oy * p.stride + ky) - int(p.pad);
    int xx = int(ox * p.stride + kx) - int(p.pad);
    if (y >= 0 && y < int(p.in_h) && xx >= 0 && xx < int(p.in_w))
      col[i] = x[((b * p.in_h + uint(y)) * p.in_w + uint(xx)) * p.in_c + ci];
    else
      col[i] = f2sfp(0.0);
  }
}
