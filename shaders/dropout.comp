#version 450
#extension GL_GOOGLE_include_directive : require
// Inverted dropout, PyTorch's semantics: y = x * (keep ? 1/(1-p) : 0). A
// kept element is x * scale (one fp32 product, one rounding to the format);
// a dropped one is x * 0: a zero with x's sign, and NaN for an inf or NaN x
// (PyTorch multiplies by the mask, so NaN * 0 = NaN). The backward is the
// same map on dy with the same keeps, drawn again from the same counter.
// Element i's draw is word i % 4 of Philox(counter (i / 4, step, stream,
// salt), key seed): nothing is stored, and a resumed run draws the same.
#include "types.glsl"
#include "nonfinite.glsl"
#include "philox.glsl"
#include "elementwise.glsl"

layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) writeonly buffer Y { sfp y[]; };
layout(std430, binding = 2) readonly buffer Counter { uint counter[]; };
#include "vkamp/gpu_abi/dropout.h"

// x * scale and x * 0 chosen on the bits, so no driver's NaN or signed-zero
// folding changes them (nonfinite.glsl).
float kept(float v) { return is_nan_bits(v) ? quiet_nan() : v * p.scale; }
float dropped(float v) { return is_nonfinite(v) ? quiet_nan() : uintBitsToFloat(floatBitsToUint(v) & 0x80000000u); }

void main() {
  const uint step = counter[p.counter_word];
  const uint groups = p.n / 4u + uint(p.n % 4u != 0u);
  FOR_EACH_ELEMENT(g, groups) {
    const uvec4 r = philox4x32_10(uvec4(g, step, p.stream, p.salt), uvec2(p.seed_lo, p.seed_hi));
    for (uint j = 0u; j < 4u && g * 4u + j < p.n; ++j) {
      const uint i = g * 4u + j;
      const float v = sfp2f(x[i]);
      y[i] = f2sfp(r[j] >= p.threshold ? kept(v) : dropped(v));
    }
  }
}
