// What gemm.comp and gemm_mma.comp share: the specialization constants
// both take (same ids), bindings 2-5, the push constants, where a product's
// matrices start, the zero-padded operand loads, and the epilogue that takes
// one fp32 sum to C. The includer declares A and B (bindings 0 and 1) and
// the A_AT(i) / B_AT(i) macros that read them as float, then includes this.
// The push constants are vkamp/gpu_abi/gemm.h's GemmPush.
#ifndef VKAMP_GEMM_COMMON_GLSL
#define VKAMP_GEMM_COMMON_GLSL

// TRANS_A: A is stored k x m. TRANS_B: B is stored n x k.
layout(constant_id = 0) const uint TRANS_A = 0;
layout(constant_id = 1) const uint TRANS_B = 0;
// SPLIT_K = 1: workgroup z sums only k in [z kc, (z+1) kc) and writes its
// alpha-scaled fp32 partial to `partial` (z-major); gemm_reduce.comp then
// adds the partials in order, and runs the epilogue.
layout(constant_id = 5) const uint SPLIT_K = 0;
// BATCHED = 1: workgroup z + p.z0 picks product z, whose A starts at
// a_first + (z / inner) a_outer + (z % inner) sa (B and C alike).
layout(constant_id = 9) const uint BATCHED = 0;
layout(constant_id = 11) const uint BIAS = 0;
layout(constant_id = 12) const uint ACT = ACT_NONE;

layout(std430, binding = 2) buffer C { sfp c[]; };
layout(std430, binding = 3) writeonly buffer Partial { float partial[]; };
layout(std430, binding = 4) readonly buffer Bias { sfp bias[]; };
layout(std430, binding = 5) buffer Z { sfp zs[]; };  // the epilogue's z (gemm_epilogue.glsl)
#include "vkamp/gpu_abi/gemm.h"
#include "gemm_epilogue.glsl"

uint k_end;       // one past the last k this workgroup sums
uint a0, b0, c0;  // this product's first element of A, B and C

// Sets a0, b0, c0 for this workgroup's product.
void locate_product() {
  a0 = p.a_first, b0 = p.b_first, c0 = p.c_first;
  if (BATCHED != 0u) {
    uint z = gl_WorkGroupID.z + p.z0;
    uint outer = z / p.inner, inner = z - outer * p.inner;
    a0 += outer * p.a_outer + inner * p.sa;
    b0 += outer * p.b_outer + inner * p.sb;
    c0 += outer * p.c_outer + inner * p.sc;
  }
}

// op(A)[i, kk] and op(B)[kk, j], zero outside the product: a tile's
// padding then adds 0 x 0, never 0 x (an inf or NaN of a real row).
float load_a(uint i, uint kk) {
  if (i >= p.m || kk >= k_end) return 0.0;
  return TRANS_A != 0u ? A_AT(a0 + kk * p.lda + i) : A_AT(a0 + i * p.lda + kk);
}
float load_b(uint kk, uint j) {
  if (kk >= k_end || j >= p.n) return 0.0;
  return TRANS_B != 0u ? B_AT(b0 + j * p.ldb + kk) : B_AT(b0 + kk * p.ldb + j);
}

// Output (i, j) of this product from its fp32 sum `acc` (i < m, j < n).
// Epilogue (SPLIT_K = 0; a split product runs it in gemm_reduce.comp):
// BIAS = 1 adds bias[j] in fp32 before the single rounding, and ACT applies
// gemm_epilogue.glsl's activation step (f, keeping z, or the backward form).
void store_c(uint i, uint j, float acc) {
  float v = p.alpha * acc;
  if (SPLIT_K != 0u) {
    partial[(gl_WorkGroupID.z * p.m + i) * p.n + j] = v;
    return;
  }
  if ((p.accumulate & 1u) != 0u) v += sfp2f(c[c0 + i * p.ldc + j]);
  if (BIAS != 0u) v += sfp2f(bias[j]);
  c[c0 + i * p.ldc + j] = f2sfp(activation_epilogue(v, i * p.n + j));
}

#endif
