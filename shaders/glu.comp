#version 450
#extension GL_GOOGLE_include_directive : require
// A gated linear unit (Shazeer's GLU variants): y = f(gate) * up, Llama's
// SwiGLU MLP with f = SiLU. Backward: dgate = dy * up * f'(gate) and
// dup = dy * f(gate), each written, added to its old value, or skipped
// (push modes). All in fp32, one rounding per output; inf and NaN take
// IEEE products (dy inf at up 0 gives NaN, as PyTorch's).
#include "types.glsl"
#include "nonfinite.glsl"
#include "elementwise.glsl"
#include "activation_fn.glsl"

layout(constant_id = 0) const uint ACT = ACT_SILU;
layout(constant_id = 1) const uint BACKWARD = 0;

layout(std430, binding = 0) readonly buffer Gate { sfp gate[]; };
layout(std430, binding = 1) readonly buffer Up { sfp up[]; };
layout(std430, binding = 2) readonly buffer DY { sfp dy[]; };  // backward only
layout(std430, binding = 3) buffer Out0 { sfp out0[]; };       // y, or dgate
layout(std430, binding = 4) buffer Out1 { sfp out1[]; };       // dup (backward)
#include "vkamp/gpu_abi/glu.h"

// (A 16-bit sfp passed as an inout parameter would need Int16 locals.)
float put(uint mode, float old, float v) { return mode == kGluAdd ? old + v : v; }

void main() {
  FOR_EACH_ELEMENT(i, p.n) {
    float g = sfp2f(gate[i]), u = sfp2f(up[i]);
    if (BACKWARD == 0u) {
      out0[i] = f2sfp(activate(ACT, g) * u);
    } else {
      float d = sfp2f(dy[i]);
      if (p.gate_mode != kGluSkip) out0[i] = f2sfp(put(p.gate_mode, sfp2f(out0[i]), d * u * activate_grad(ACT, g)));
      if (p.up_mode != kGluSkip) out1[i] = f2sfp(put(p.up_mode, sfp2f(out1[i]), d * activate(ACT, g)));
    }
  }
}
