#version 450
#extension GL_GOOGLE_include_directive : require
// C[m x n] = alpha * op(A) op(B) (+ C when accumulate), row-major, fp32
// accumulation. Each thread computes a 4x4 block of C (RM x CN on the direct
// path: 16 x 8 for large C on CPU drivers); a workgroup of WX x WY threads
// covers a (4 WY) x (4 WX) tile, (RM WY) x (CN WX) on the direct path. The host shapes the tile to
// the product (ops::gemm_plan): thin outputs such as a convolution's 6 or 16
// channels get a thin tile instead of a 64x64 one that is 90% padding.
// The operand loads, batching (BATCHED), split-k (SPLIT_K) and the fused
// bias/activation epilogue are shaders/common/gemm_common.glsl's, shared
// with gemm_mma.comp (the tensor-core GEMM).
// SPLIT_K spreads a long k over many workgroups when C is too small to fill
// the device (a convolution's dW: 6x25 outputs, k = 50176).
// Batches: the host never splits k then, so workgroup z is free.
// K_RANGE limits output row i's sum to k <= i (1) or k >= i (2): the causal
// products of attention. Products outside are skipped, not multiplied by a
// zero, so an inf or NaN there cannot reach row i (0 * NaN is NaN).
// The subgroup broadcast of SG_A needs the ballot capability, which not
// every device has: it is only in the ".subgroup" variant of this shader
// (VKAMP_GEMM_SUBGROUP), which the host picks where the device reports it.
// The ".texel" variant (VKAMP_GEMM_TEXEL) reads A and B through uniform
// texel buffers instead, for CPU drivers (see below).
#if defined(VKAMP_GEMM_SUBGROUP)
#extension GL_KHR_shader_subgroup_ballot : require
#endif
#include "types.glsl"
#include "nonfinite.glsl"
#include "activation_fn.glsl"

layout(local_size_x_id = 3, local_size_y_id = 4) in;
layout(constant_id = 2) const uint TILED = 1;
// Outputs per thread on the direct path (TILED = 0): RM rows x CN columns.
// Each operand value loaded feeds CN (from A) or RM (from B) fmas, so a
// bigger block needs fewer loads per flop; lavapipe runs every load of a
// SIMD row of threads as one scalar load per lane, which is where its time
// goes. The tiled path always uses 4 x 4.
layout(constant_id = 6) const uint RM = 4;
layout(constant_id = 7) const uint CN = 4;
// SG_A = 1 (direct path, RM = 16, subgroups of 8 along x): each lane of a
// subgroup loads 2 of the 16 A values the subgroup's lanes share and
// broadcasts them, instead of every lane loading all 16.
layout(constant_id = 8) const uint SG_A = 0;
layout(constant_id = 10) const uint K_RANGE = 0;

#if defined(VKAMP_GEMM_TEXEL)
// A and B as uniform texel buffers: lavapipe gathers a texel fetch for all
// its SIMD lanes in vector code, where it loads a storage buffer lane by
// lane with a branch each. 16-bit bit patterns (bf16, cb16) come as uints.
#if defined(VKAMP_BF16) || defined(VKAMP_CB16)
layout(binding = 0) uniform usamplerBuffer a_texels;
layout(binding = 1) uniform usamplerBuffer b_texels;
#define A_AT(i) sfp2f(texelFetch(a_texels, int(i)).x)
#define B_AT(i) sfp2f(texelFetch(b_texels, int(i)).x)
#else
layout(binding = 0) uniform samplerBuffer a_texels;
layout(binding = 1) uniform samplerBuffer b_texels;
#define A_AT(i) texelFetch(a_texels, int(i)).x
#define B_AT(i) texelFetch(b_texels, int(i)).x
#endif
#elif defined(VKAMP_GEMM_QUANT)
// The ".quant" variant: B in ggml blocks (a quantized frozen weight, rows
// of whole blocks) read as 32-bit words, each value dequantized as it is
// loaded: into shared memory on the tiled path, registers on the direct one.
layout(std430, binding = 0) readonly buffer A { sfp a[]; };
layout(std430, binding = 1) readonly buffer B { uint b_words[]; };
#define QWORD(w) b_words[w]
#include "dequant.glsl"
#define A_AT(i) sfp2f(a[i])
#define B_AT(i) quant_value(i)
#else
layout(std430, binding = 0) readonly buffer A { sfp a[]; };
layout(std430, binding = 1) readonly buffer B { sfp b[]; };
#define A_AT(i) sfp2f(a[i])
#define B_AT(i) sfp2f(b[i])
#endif
#include "gemm_common.glsl"

const uint WX = gl_WorkGroupSize.x, WY = gl_WorkGroupSize.y, THREADS = WX * WY;
const uint BM = 4u * WY, BN = 4u * WX, BK = 16u;  // tiled path
const uint DM = (TILED != 0u ? 4u : RM), DN = (TILED != 0u ? 4u : CN);  // outputs per thread
// +1 keeps column reads off one bank. Without TILED the arrays shrink to
// one column: declared shared memory counts against the device's limit
// even when no instruction touches it.
shared float As[BK][TILED != 0u ? BM + 1u : 1u];
shared float Bs[BK][TILED != 0u ? BN + 1u : 1u];

// Whether output row i sums the product at kk (K_RANGE).
bool in_k_range(uint i, uint kk) { return K_RANGE == 0u || (K_RANGE == 1u ? kk <= i : kk >= i); }

void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint tid = ty * WX + tx;
  uint row0 = gl_WorkGroupID.y * (DM * WY), col0 = gl_WorkGroupID.x * (DN * WX);
  uint k_begin = SPLIT_K != 0u ? gl_WorkGroupID.z * p.kc : 0u;
  k_end = SPLIT_K != 0u ? min(p.k, k_begin + p.kc) : p.k;
  locate_product();
  // No row of this workgroup sums k past its last row (K_RANGE 1) or before
  // its first (K_RANGE 2): half the work of a causal product.
  if (K_RANGE == 1u) k_end = min(k_end, row0 + DM * WY);
  if (K_RANGE == 2u) k_begin = max(k_begin, row0);

#if defined(VKAMP_GEMM_QUANT)
  // Down a column of W in a k-quant (B not transposed: the input gradient),
  // every value is in another row and so another scale group. A thread then
  // takes DN consecutive columns, which share a group (rows are whole blocks
  // and DN divides QGROUP), and looks the scales up once for all of them.
  bool b_grouped = TRANS_B == 0u && QGROUP != 0u && TILED == 0u && QGROUP % DN == 0u;
#else
  bool b_grouped = false;
#endif
  // Output column q of this thread: col0 + tx c_lane + q c_step.
  uint c_lane = b_grouped ? DN : 1u, c_step = b_grouped ? 1u : WX;

  float acc[DM][DN];
  for (uint r = 0u; r < DM; ++r)
    for (uint q = 0u; q < DN; ++q) acc[r][q] = 0.0;

  if (TILED == 0u) {
    // Offsets of this thread's rows of A and columns of B at k = 0; the
    // loop reads A[ai + kk sa] and B[bj + kk sb]. Rows and columns past C's
    // edge read C's last row or column instead: their sums are never
    // stored, and the loads then need no branch (a CPU driver pays for
    // every masked load).
    uint ai[DM], bj[DN];
    for (uint r = 0u; r < DM; ++r) {
      uint i = min(row0 + ty + WY * r, p.m - 1u);
      ai[r] = a0 + (TRANS_A != 0u ? i : i * p.lda);
    }
    for (uint q = 0u; q < DN; ++q) {
      uint j = min(col0 + tx * c_lane + q * c_step, p.n - 1u);
      bj[q] = b0 + (TRANS_B != 0u ? j * p.ldb : j);
    }
#if defined(VKAMP_GEMM_SUBGROUP)
    uint sg_l = gl_SubgroupInvocationID, sg_z = 0u, sg_h = 8u;  // a variable: glslang bounds-checks av[] at its default size
    uint sg_i0 = min(row0 + ty + WY * sg_l, p.m - 1u), sg_i1 = min(row0 + ty + WY * (sg_l + 8u), p.m - 1u);
    uint sg_a0 = a0 + (TRANS_A != 0u ? sg_i0 : sg_i0 * p.lda), sg_a1 = a0 + (TRANS_A != 0u ? sg_i1 : sg_i1 * p.lda);
#endif
    uint sa = TRANS_A != 0u ? p.lda : 1u, sb = TRANS_B != 0u ? 1u : p.ldb;
#if defined(VKAMP_GEMM_QUANT)
    // Along a row of W in a k-quant (B transposed: the forward), a column's
    // scales change once every QGROUP values (rows are whole blocks, so
    // bj[q] is a multiple of QGROUP): looked up at each group's start and
    // at k_begin, not for every value.
    vec2 bs[DN];
#endif
    for (uint kk = k_begin; kk < k_end; ++kk) {
      float av[DM], bv[DN];
#if defined(VKAMP_GEMM_SUBGROUP)
      if (SG_A != 0u) {
        float m0 = A_AT(sg_a0 + kk * sa), m1 = A_AT(sg_a1 + kk * sa);
#define BC(l) av[sg_z + l] = subgroupBroadcast(m0, l); av[sg_h + l] = subgroupBroadcast(m1, l);
        BC(0) BC(1) BC(2) BC(3) BC(4) BC(5) BC(6) BC(7)
#undef BC
      } else
#endif
      {
        for (uint r = 0u; r < DM; ++r) av[r] = A_AT(ai[r] + kk * sa);
      }
#if defined(VKAMP_GEMM_QUANT)
      if (TRANS_B != 0u && QGROUP != 0u) {
        if (kk == k_begin || kk % QGROUP == 0u)
          for (uint q = 0u; q < DN; ++q) bs[q] = quant_scale(bj[q] + kk);
        for (uint q = 0u; q < DN; ++q) bv[q] = quant_scaled(bj[q] + kk, bs[q]);
      } else if (b_grouped) {
        // Columns past C's edge read its last one: still one group.
        vec2 scale = quant_scale(bj[0] + kk * sb);
        for (uint q = 0u; q < DN; ++q) bv[q] = quant_scaled(bj[q] + kk * sb, scale);
      } else
#endif
      {
        for (uint q = 0u; q < DN; ++q) bv[q] = B_AT(bj[q] + kk * sb);
      }
      for (uint r = 0u; r < DM; ++r)
        if (in_k_range(row0 + ty + WY * r, kk))
          for (uint q = 0u; q < DN; ++q) acc[r][q] = fma(av[r], bv[q], acc[r][q]);
    }
  }
  for (uint k0 = k_begin; TILED != 0u && k0 < k_end; k0 += BK) {
    // The fastest-moving index follows the operand's contiguous dimension
    // so global loads coalesce.
    for (uint idx = tid; idx < BK * BM; idx += THREADS) {
      uint ai = TRANS_A != 0u ? idx % BM : idx / BK;
      uint ak = TRANS_A != 0u ? idx / BM : idx % BK;
      As[ak][ai] = load_a(row0 + ai, k0 + ak);
    }
    for (uint idx = tid; idx < BK * BN; idx += THREADS) {
      uint bj = TRANS_B != 0u ? idx / BK : idx % BN;
      uint bk = TRANS_B != 0u ? idx % BK : idx / BN;
      Bs[bk][bj] = load_b(k0 + bk, col0 + bj);
    }
    barrier();
    for (uint kk = 0u; kk < BK; ++kk) {
      float av[DM], bv[DN];
      for (uint r = 0u; r < DM; ++r) av[r] = As[kk][ty + WY * r];
      for (uint q = 0u; q < DN; ++q) bv[q] = Bs[kk][tx + WX * q];
      for (uint r = 0u; r < DM; ++r)
        if (in_k_range(row0 + ty + WY * r, k0 + kk))
          for (uint q = 0u; q < DN; ++q) acc[r][q] = fma(av[r], bv[q], acc[r][q]);
    }
    barrier();
  }

  for (uint r = 0u; r < DM; ++r) {
    uint i = row0 + ty + WY * r;
    if (i >= p.m) continue;
    for (uint q = 0u; q < DN; ++q) {
      uint j = col0 + tx * c_lane + q * c_step;
      if (j >= p.n) continue;
      store_c(i, j, acc[r][q]);
    }
  }
}
