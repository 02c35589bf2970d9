#version 450
#extension GL_GOOGLE_include_directive : require
// The tensor-core GEMM: gemm.comp's product (same push constants, bindings,
// batching, split-k and epilogue: common/gemm_common.glsl) for fp16
// operands, built around a 16 x 16 x 16 fp16 multiply into fp32.
// A workgroup of WARPS_M x WARPS_N warps computes a BM x BN tile of C.
// Each step stages a BK-deep slice of op(A) (BM x BK) and op(B) (BK x BN)
// in shared memory as fp16 (read into registers during the step before), with rows padded by 8 values (16 bytes: the
// alignment cooperative-matrix loads need, and it moves each row's start
// to another bank); then each warp multiplies its FRAGS_M x FRAGS_N block
// of 16 x 16 accumulators by the slice, 16 deep at a time. The epilogue
// stages one accumulator per warp in shared memory and stores it through
// store_c, which skips the tile's padding past C's edges.
// The multiply-accumulate step has two builds: ".coopmat" (VKAMP_COOPMAT:
// GL_NV_cooperative_matrix, tensor cores) and the default, an emulation in
// plain GLSL that runs on every device (common/mma_*.glsl).
// Not here: K_RANGE (attention's causal products take gemm.comp, which
// skips products past the diagonal instead of multiplying them by zero).
#include "types.glsl"
#include "nonfinite.glsl"
#include "activation_fn.glsl"

layout(local_size_x_id = 3) in;  // WARPS_M x WARPS_N x LANES invocations
layout(constant_id = 13) const uint WARPS_N = 2;
layout(constant_id = 14) const uint FRAGS_M = 2;  // 16 x 16 accumulators per warp along m
layout(constant_id = 15) const uint FRAGS_N = 2;  // and along n
layout(constant_id = 16) const uint LANES = 32;   // invocations per warp (the subgroup size with VKAMP_COOPMAT)

layout(std430, binding = 0) readonly buffer A { sfp a[]; };
layout(std430, binding = 1) readonly buffer B { sfp b[]; };
#define A_AT(i) sfp2f(a[i])
#define B_AT(i) sfp2f(b[i])
#include "gemm_common.glsl"

const uint THREADS = gl_WorkGroupSize.x, WARPS = THREADS / LANES, WARPS_M = WARPS / WARPS_N;
const uint BM = 16u * FRAGS_M * WARPS_M, BN = 16u * FRAGS_N * WARPS_N, BK = 32u;
const uint AS = BK + 8u, BS = BN + 8u;  // row strides of the staged tiles
shared float16_t As[BM * AS];           // op(A) slice, row-major
shared float16_t Bs[BK * BS];           // op(B) slice, row-major
shared float Cs[WARPS * 256u];          // one 16 x 16 accumulator per warp, for the epilogue

#if defined(VKAMP_COOPMAT)
#include "mma_coopmat.glsl"
#else
#include "mma_emulated.glsl"
#endif

// One slice of op(A) and op(B) in registers: elements idx = tid + THREADS r
// of each. Consecutive idx run along the operand's stored rows, so the
// global loads coalesce. The coordinates are recomputed when staging rather
// than kept: registers go to the accumulators.
const uint A_PER = (BM * BK + THREADS - 1u) / THREADS, B_PER = (BK * BN + THREADS - 1u) / THREADS;
float16_t a_next[A_PER], b_next[B_PER];
uvec2 a_coord(uint idx) { return TRANS_A != 0u ? uvec2(idx % BM, idx / BM) : uvec2(idx / BK, idx % BK); }  // (i, kk)
uvec2 b_coord(uint idx) { return TRANS_B != 0u ? uvec2(idx % BK, idx / BK) : uvec2(idx / BN, idx % BN); }  // (kk, j)

void fetch_slice(uint tid, uint row0, uint col0, uint k0) {
  for (uint r = 0u; r < A_PER; ++r) {
    uvec2 ik = a_coord(tid + THREADS * r);
    a_next[r] = float16_t(load_a(row0 + ik.x, k0 + ik.y));
  }
  for (uint r = 0u; r < B_PER; ++r) {
    uvec2 kj = b_coord(tid + THREADS * r);
    b_next[r] = float16_t(load_b(k0 + kj.x, col0 + kj.y));
  }
}

void stage_slice(uint tid) {
  for (uint r = 0u; r < A_PER; ++r) {
    uint idx = tid + THREADS * r;
    uvec2 ik = a_coord(idx);
    if (idx < BM * BK) As[ik.x * AS + ik.y] = a_next[r];
  }
  for (uint r = 0u; r < B_PER; ++r) {
    uint idx = tid + THREADS * r;
    uvec2 kj = b_coord(idx);
    if (idx < BK * BN) Bs[kj.x * BS + kj.y] = b_next[r];
  }
}

void main() {
  uint tid = gl_LocalInvocationIndex, warp = mma_warp();
  uint warp_row = 16u * FRAGS_M * (warp / WARPS_N), warp_col = 16u * FRAGS_N * (warp % WARPS_N);
  uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
  uint k_begin = SPLIT_K != 0u ? gl_WorkGroupID.z * p.kc : 0u;
  k_end = SPLIT_K != 0u ? min(p.k, k_begin + p.kc) : p.k;
  locate_product();

  mma_clear();
  // The next slice is read into registers while the warps multiply the
  // staged one, so its global-memory latency hides behind the math.
  if (k_begin < k_end) fetch_slice(tid, row0, col0, k_begin);
  for (uint k0 = k_begin; k0 < k_end; k0 += BK) {
    barrier();  // every warp is done with the previous slice
    stage_slice(tid);
    barrier();
    if (k0 + BK < k_end) fetch_slice(tid, row0, col0, k0 + BK);
    for (uint kk = 0u; kk < BK; kk += 16u) mma_step(warp_row, warp_col, kk);
  }

  // Every invocation runs every iteration (the barriers need uniform flow).
  uint lane = mma_lane();
  for (uint f = 0u; f < FRAGS_M * FRAGS_N; ++f) {
    mma_stage(f, warp * 256u);
    barrier();
    for (uint e = lane; e < 256u; e += LANES) {
      uint i = row0 + warp_row + 16u * (f / FRAGS_N) + e / 16u;
      uint j = col0 + warp_col + 16u * (f % FRAGS_N) + e % 16u;
      if (i < p.m && j < p.n) store_c(i, j, Cs[warp * 256u + e]);
    }
    barrier();
  }
}
