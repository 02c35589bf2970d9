#version 450
#extension GL_GOOGLE_include_directive : require
// Activations, forward (y = f(x)) and backward (dx = dy * f'(x)).
// ACT: a code of activation_fn.glsl other than none, whose formulas both
// this shader and gemm.comp's epilogue use. ReLU stays in the arithmetic
// type; the others run in fp32.
#include "types.glsl"
#include "nonfinite.glsl"
#include "elementwise.glsl"
#include "activation_fn.glsl"

layout(constant_id = 0) const uint ACT = ACT_RELU;
layout(constant_id = 1) const uint BACKWARD = 0;

layout(std430, binding = 0) readonly buffer X { sfp x[]; };
layout(std430, binding = 1) readonly buffer DY { sfp dy[]; };
layout(std430, binding = 2) writeonly buffer Out { sfp outv[]; };
#include "vkamp/gpu_abi/activation.h"

void main() {
  FOR_EACH_ELEMENT(i, p.n) {
    if (ACT == ACT_RELU) {
      afp v = sfp2afp(x[i]);
      if (BACKWARD == 0u) outv[i] = afp2sfp(RELU(v, afp(0)));
      else {
        afp g = sfp2afp(dy[i]);
        // An inf or NaN dy at x <= 0 gives NaN, never a hidden 0. Tested,
        // not computed as g * 0: compilers fold that to 0 (lavapipe does).
        // A NaN x passes through, found on its bits (nonfinite.glsl).
        afp blocked = is_nonfinite(g) ? afp(quiet_nan()) : afp(0);
        outv[i] = afp2sfp(is_nan_bits(v) ? v : (v > afp(0) ? g : blocked));
      }
    } else {
      float v = sfp2f(x[i]);
      float r = BACKWARD == 0u ? activate(ACT, v) : sfp2f(dy[i]) * activate_grad(ACT, v);
      outv[i] = f2sfp(r);
    }
  }
}
