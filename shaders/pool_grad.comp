#version 450
#extension GL_GOOGLE_include_directive : require
// 2-D pooling backward, NHWC, no padding, two ways (WINDOWS):
// - false, a gather: one thread per input element, summing in fp32 over the
//   windows that cover it (several when stride < window), in a fixed order;
//   one rounding to the format. Max pooling re-scans every covering window.
// - true, only for stride >= window (windows do not overlap): one thread per
//   window, which scans it once and writes every input of its stride x
//   stride cell (0 outside the window); the last row and column of windows
//   also take the rows and columns no window reaches (fewer than window), so
//   each input is written once. Each input has at most one term, which
//   comes out as the gather's 0.0 + term, so both ways give the same bits.
// KIND 1, average: each window passes dy / window^2 to every input in it.
// KIND 0, max: each window passes dy to its first maximal input (row-major
// order within the window), found again from x, so no index buffer is kept.
// A window holding a NaN (whose forward output is NaN) passes NaN, whatever
// dy is, to its first NaN input: the derivative of max there is undefined,
// and a NaN forward must not leave a finite gradient behind.
// Every NaN written is the canonical quiet NaN (nonfinite.glsl), so both
// ways give the same bits on drivers whose arithmetic rewrites NaN payloads.
#include "types.glsl"
#include "nonfinite.glsl"
#include "elementwise.glsl"
#include "fastdiv.glsl"
#include "vkamp/gpu_abi/pool.h"

layout(constant_id = 0) const uint KIND = 0;
layout(constant_id = 1) const bool WINDOWS = false;

layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) readonly buffer DY { sfp dy[]; };
layout(std430, binding = 2) writeonly buffer DX { sfp dx[]; };

// Row-major position within the window based at `base` of its first NaN,
// else of its first maximal value; *has_nan tells which.
uint first_max(uint base, out bool has_nan) {
  float m = sfp2f(x[base]);
  uint at = 0u;
  has_nan = is_nan_bits(m);
  for (uint ky = 0u; ky < p.window && !has_nan; ++ky)
    for (uint kx = 0u; kx < p.window; ++kx) {
      float v = sfp2f(x[base + (ky * p.in_w + kx) * p.channels]);
      if (is_nan_bits(v)) {
        has_nan = true;
        at = ky * p.window + kx;
        break;
      }
      if (v > m) {
        m = v;
        at = ky * p.window + kx;
      }
    }
  return at;
}

// 0.0 + t, t, but +0 for -0 (a sum that starts at +0.0 is -0 only if the
// compiler dropped the start). In integer
// ops: a compiler may fold 0.0 + t to t (lavapipe did, even when precise).
float zero_plus(float t) {
  uint u = floatBitsToUint(t);
  return uintBitsToFloat(u == 0x80000000u ? 0u : u);
}

// The gather: p.n is the number of input elements.
void gather() {
  const float qnan = quiet_nan();
  float inv = 1.0 / float(p.window * p.window);
  FOR_EACH_ELEMENT(i, p.n) {
    uint r = fast_div(i, p.by_channels), c = i - r * p.channels;
    uint r2 = fast_div(r, p.by_in_w), xx = r - r2 * p.in_w;
    uint b = fast_div(r2, p.by_in_h), y = r2 - b * p.in_h;
    // Windows o with o*s <= pos <= o*s + window - 1 and o < out.
    uint oy0 = y + 1u > p.window ? fast_div(y + p.stride - p.window, p.by_stride) : 0u;
    uint ox0 = xx + 1u > p.window ? fast_div(xx + p.stride - p.window, p.by_stride) : 0u;
    uint oy1 = min(fast_div(y, p.by_stride), p.out_h - 1u), ox1 = min(fast_div(xx, p.by_stride), p.out_w - 1u);
    float s = 0.0;
    bool nan_term = false;  // a NaN window's term, kept out of the sum
    for (uint oy = oy0; oy <= oy1; ++oy)
      for (uint ox = ox0; ox <= ox1; ++ox) {
        float g = sfp2f(dy[((b * p.out_h + oy) * p.out_w + ox) * p.channels + c]);
        if (KIND == 1u) {
          s += g * inv;
        } else {
          uint base = ((b * p.in_h + oy * p.stride) * p.in_w + ox * p.stride) * p.channels + c;
          bool has_nan;
          uint at = first_max(base, has_nan);
          if (at == (y - oy * p.stride) * p.window + (xx - ox * p.stride)) {
            if (has_nan) nan_term = true;
            else s += g;
          }
        }
      }
    // zero_plus: the sum starts at +0 even where the compiler dropped the 0.0 +.
    dx[i] = f2sfp(nan_term ? qnan : canonical_nan(zero_plus(s)));
  }
}

// One thread per window: p.n is the number of output elements.
void per_window() {
  const float qnan = quiet_nan();
  float inv = 1.0 / float(p.window * p.window);
  FOR_EACH_ELEMENT(j, p.n) {
    uint r = fast_div(j, p.by_channels), c = j - r * p.channels;
    uint r2 = fast_div(r, p.by_out_w), ox = r - r2 * p.out_w;
    uint b = fast_div(r2, p.by_out_h), oy = r2 - b * p.out_h;
    uint y0 = oy * p.stride, x0 = ox * p.stride;
    uint base = ((b * p.in_h + y0) * p.in_w + x0) * p.channels + c;
    float g = sfp2f(dy[j]);
    bool has_nan = false;
    uint at = KIND == 1u ? 0u : first_max(base, has_nan);
    // The cell: stride x stride from the window's corner, to the input's
    // edge for the last window of a row or column.
    uint h = oy + 1u == p.out_h ? p.in_h - y0 : p.stride;
    uint w = ox + 1u == p.out_w ? p.in_w - x0 : p.stride;
    for (uint ky = 0u; ky < h; ++ky)
      for (uint kx = 0u; kx < w; ++kx) {
        float s = 0.0;
        if (ky < p.window && kx < p.window) {
          if (KIND == 1u) s = canonical_nan(zero_plus(g * inv));
          else if (at == ky * p.window + kx) s = has_nan ? qnan : canonical_nan(zero_plus(g));
        }
        dx[base + (ky * p.in_w + kx) * p.channels] = f2sfp(s);
      }
  }
}

void main() {
  if (WINDOWS) per_window();
  else gather();
}
