#version 450
#extension GL_GOOGLE_include_directive : require
// The second pass of a split-k GEMM (gemm.comp with SPLIT_K = 1):
// c[i] = sum over z of partial[z][i] (+ c[i] when accumulate), the partials
// added in z order in fp32 and rounded once, so the result is deterministic.
// A split GEMM's epilogue runs here, as gemm.comp runs it unsplit: BIAS = 1
// adds bias[column] (c is m x p.cols) before the rounding, and ACT applies
// gemm_epilogue.glsl's activation step (f, keeping z, or the backward form).
#include "types.glsl"
#include "nonfinite.glsl"
#include "activation_fn.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint BIAS = 0;
layout(constant_id = 1) const uint ACT = ACT_NONE;
layout(std430, binding = 0) readonly buffer Partial { float partial[]; };
layout(std430, binding = 1) buffer C { sfp c[]; };
layout(std430, binding = 2) readonly buffer Bias { sfp bias[]; };
layout(std430, binding = 3) buffer Z { sfp zs[]; };
#include "vkamp/gpu_abi/gemm_reduce.h"
#include "gemm_epilogue.glsl"

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += gl_NumWorkGroups.x * 256u) {
    float v = 0.0;
    for (uint z = 0u; z < p.splits; ++z) v += partial[z * p.count + i];
    if (p.accumulate != 0u) v += sfp2f(c[i]);
    if (BIAS != 0u) v += sfp2f(bias[i % p.cols]);
    c[i] = f2sfp(activation_epilogue(v, i));
  }
}
