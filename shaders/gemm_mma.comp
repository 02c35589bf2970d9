#version 450
#extension GL_GOOGLE_include_directive : require
// The tensor-core GEMM: gemm.comp's product (same push constants, bindings,
// batching, split-k, K_RANGE and epilogue: common/gemm_common.glsl) for fp16
// operands, built around a 16 x 16 x 16 fp16 multiply into fp32. One kernel
// family: every performance choice is a specialization constant, so the
// tuner (engine/src/ops/gemm_tuner.cpp) picks the shape per device.
//
// A workgroup of WARPS_M x WARPS_N warps computes a BM x BN tile of C; each
// warp a FRAGS_M x FRAGS_N block of 16 x 16 fp32 accumulators. Each step
// stages a BK-deep slice of op(A) and op(B) in shared memory as fp16, rows
// padded by 8 values (16 bytes: the alignment cooperative-matrix loads
// need, and each row's start moves to another bank), read into registers
// during the step before. DOUBLE_BUF = 1 keeps two staged slices, so the
// next one is written while the warps multiply this one: one barrier a slice
// instead of two.
// Operands move in vectors of 8 values along their stored rows: one 16-byte
// load (vec_loads(): the host saw every row start and offset on a multiple
// of 8) where the slice lies wholly inside the operand, else 8 bounds-checked
// loads (edge tiles only).
// The epilogue stages one accumulator per warp in shared memory and stores it
// through store_c; with direct_store() (no accumulate, bias, activation or
// split: nothing needs the elements) interior tiles store the accumulators
// straight to C. Those two are run-time flags, not specialization constants:
// one pipeline serves aligned and unaligned operands, with or without an
// epilogue (on a CPU driver each pipeline costs seconds to compile).
// The multiply-accumulate step has two builds: ".coopmat" (VKAMP_COOPMAT:
// GL_NV_cooperative_matrix, tensor cores) and the default, an emulation in
// plain GLSL that runs on every device (common/mma_*.glsl), the same
// algorithm otherwise.
#include "types.glsl"
#include "nonfinite.glsl"
#include "activation_fn.glsl"

layout(local_size_x_id = 3) in;  // WARPS_M x WARPS_N x LANES invocations
// K_RANGE (gemm.comp's id): output row i sums only k <= i (1) or k >= i (2).
// Slices wholly past every row of the tile are never loaded; per fragment,
// 16-deep chunks past its rows are skipped and the diagonal chunk is masked
// element by element (mma_*.glsl), so a NaN there never reaches the row.
layout(constant_id = 10) const uint K_RANGE = 0;
layout(constant_id = 13) const uint WARPS_N = 2;
layout(constant_id = 14) const uint FRAGS_M = 2;  // 16 x 16 accumulators per warp along m
layout(constant_id = 15) const uint FRAGS_N = 2;  // and along n
layout(constant_id = 16) const uint LANES = 32;   // invocations per warp (the subgroup size with VKAMP_COOPMAT)
layout(constant_id = 17) const uint BK = 32;      // k depth of a staged slice: 32 or 64
layout(constant_id = 18) const uint DOUBLE_BUF = 0;

layout(std430, binding = 0) readonly buffer A { sfp a[]; };
layout(std430, binding = 1) readonly buffer B { sfp b[]; };
// The same bindings, 8 fp16 values at a time.
layout(std430, binding = 0) readonly buffer A4 { uvec4 a4[]; };
layout(std430, binding = 1) readonly buffer B4 { uvec4 b4[]; };
#define A_AT(i) sfp2f(a[i])
#define B_AT(i) sfp2f(b[i])
#include "gemm_common.glsl"

// The run-time flags above gemm.comp's accumulate bit (interface/gemm.h).
bool vec_loads() { return (p.accumulate & 2u) != 0u; }
bool direct_store() { return (p.accumulate & 4u) != 0u; }

const uint THREADS = gl_WorkGroupSize.x, WARPS = THREADS / LANES, WARPS_M = WARPS / WARPS_N;
const uint BM = 16u * FRAGS_M * WARPS_M, BN = 16u * FRAGS_N * WARPS_N, BUFS = DOUBLE_BUF + 1u;
const uint AS = BK + 8u, BS = BN + 8u;  // row strides of the staged tiles
shared float16_t As[BUFS * BM * AS];    // op(A) slice, row-major
shared float16_t Bs[BUFS * BK * BS];    // op(B) slice, row-major
shared float Cs[WARPS * 256u];          // one 16 x 16 accumulator per warp (epilogue, masked diagonal)

uint tile_row0;  // this workgroup's first row of C

// How the fragment rows [r, r + 16) sum the 16-deep chunk of k from k
// (both multiples of 16: tiles and K_RANGE's slice starts are).
const uint CHUNK_ALL = 0u, CHUNK_NONE = 1u, CHUNK_DIAGONAL = 2u;
uint chunk_use(uint r, uint k) {
  if (K_RANGE == 0u) return CHUNK_ALL;
  if (k == r) return CHUNK_DIAGONAL;
  return (K_RANGE == 1u) == (k < r) ? CHUNK_ALL : CHUNK_NONE;
}
// On the diagonal chunk: whether row r + x sums k + q.
bool diagonal_keeps(uint x, uint q) { return K_RANGE == 1u ? q <= x : q >= x; }

#if defined(VKAMP_COOPMAT)
#include "mma_coopmat.glsl"
#else
#include "mma_emulated.glsl"
#endif

// One slice of op(A) and op(B) in registers, as vectors of 8 values along
// the operand's stored rows: vector v = tid + THREADS r. Consecutive v run
// along the rows, so the loads coalesce.
const uint A_VECS = BM * BK / 8u, B_VECS = BK * BN / 8u;
const uint A_PER = (A_VECS + THREADS - 1u) / THREADS, B_PER = (B_VECS + THREADS - 1u) / THREADS;
uvec4 a_next[A_PER], b_next[B_PER];
// Vector v's first element in the slice: (i, kk) of op(A), (kk, j) of op(B).
uvec2 a_vec(uint v) {
  return TRANS_A != 0u ? uvec2((v % (BM / 8u)) * 8u, v / (BM / 8u)) : uvec2(v / (BK / 8u), (v % (BK / 8u)) * 8u);
}
uvec2 b_vec(uint v) {
  return TRANS_B != 0u ? uvec2((v % (BK / 8u)) * 8u, v / (BK / 8u)) : uvec2(v / (BN / 8u), (v % (BN / 8u)) * 8u);
}

void fetch_slice(uint tid, uint row0, uint col0, uint k0) {
  // Uniform over the workgroup: the slice lies inside the operand.
  bool a_whole = vec_loads() && row0 + BM <= p.m && k0 + BK <= k_end;
  bool b_whole = vec_loads() && col0 + BN <= p.n && k0 + BK <= k_end;
  for (uint r = 0u; r < A_PER; ++r) {
    uint v = tid + THREADS * r;
    if (v >= A_VECS) break;
    uvec2 ik = a_vec(v);
    uint i = row0 + ik.x, kk = k0 + ik.y;
    if (a_whole) {
      a_next[r] = a4[(TRANS_A != 0u ? a0 + kk * p.lda + i : a0 + i * p.lda + kk) / 8u];
    } else {
      uint w[4];
      for (uint e = 0u; e < 8u; e += 2u) {
        uvec2 d = TRANS_A != 0u ? uvec2(e, 0u) : uvec2(0u, e);
        uvec2 d1 = TRANS_A != 0u ? uvec2(e + 1u, 0u) : uvec2(0u, e + 1u);
        w[e / 2u] = packFloat2x16(f16vec2(load_a(i + d.x, kk + d.y), load_a(i + d1.x, kk + d1.y)));
      }
      a_next[r] = uvec4(w[0], w[1], w[2], w[3]);
    }
  }
  for (uint r = 0u; r < B_PER; ++r) {
    uint v = tid + THREADS * r;
    if (v >= B_VECS) break;
    uvec2 kj = b_vec(v);
    uint kk = k0 + kj.x, j = col0 + kj.y;
    if (b_whole) {
      b_next[r] = b4[(TRANS_B != 0u ? b0 + j * p.ldb + kk : b0 + kk * p.ldb + j) / 8u];
    } else {
      uint w[4];
      for (uint e = 0u; e < 8u; e += 2u) {
        uvec2 d = TRANS_B != 0u ? uvec2(e, 0u) : uvec2(0u, e);
        uvec2 d1 = TRANS_B != 0u ? uvec2(e + 1u, 0u) : uvec2(0u, e + 1u);
        w[e / 2u] = packFloat2x16(f16vec2(load_b(kk + d.x, j + d.y), load_b(kk + d1.x, j + d1.y)));
      }
      b_next[r] = uvec4(w[0], w[1], w[2], w[3]);
    }
  }
}

// The registers into staged slice `buf`, row-major op(A) and op(B).
void stage_slice(uint tid, uint buf) {
  for (uint r = 0u; r < A_PER; ++r) {
    uint v = tid + THREADS * r;
    if (v >= A_VECS) break;
    uvec2 ik = a_vec(v);
    uint at = buf * BM * AS + ik.x * AS + ik.y, step = TRANS_A != 0u ? AS : 1u;
    for (uint e = 0u; e < 8u; e += 2u) {
      f16vec2 h = unpackFloat2x16(a_next[r][e / 2u]);
      As[at + e * step] = h.x;
      As[at + (e + 1u) * step] = h.y;
    }
  }
  for (uint r = 0u; r < B_PER; ++r) {
    uint v = tid + THREADS * r;
    if (v >= B_VECS) break;
    uvec2 kj = b_vec(v);
    uint at = buf * BK * BS + kj.x * BS + kj.y, step = TRANS_B != 0u ? BS : 1u;
    for (uint e = 0u; e < 8u; e += 2u) {
      f16vec2 h = unpackFloat2x16(b_next[r][e / 2u]);
      Bs[at + e * step] = h.x;
      Bs[at + (e + 1u) * step] = h.y;
    }
  }
}

void multiply_slice(uint buf, uint warp_row, uint warp_col, uint k0) {
  for (uint kk = 0u; kk < BK; kk += 16u) mma_step(buf * BM * AS, buf * BK * BS, warp_row, warp_col, kk, k0 + kk);
}

void main() {
  uint tid = gl_LocalInvocationIndex, warp = mma_warp();
  uint warp_row = 16u * FRAGS_M * (warp / WARPS_N), warp_col = 16u * FRAGS_N * (warp % WARPS_N);
  uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
  tile_row0 = row0;
  uint k_begin = SPLIT_K != 0u ? gl_WorkGroupID.z * p.kc : 0u;
  k_end = SPLIT_K != 0u ? min(p.k, k_begin + p.kc) : p.k;
  // No row of this tile sums k past its last row (K_RANGE 1) or before its
  // first (K_RANGE 2): those slices are never loaded.
  if (K_RANGE == 1u) k_end = min(k_end, row0 + BM);
  if (K_RANGE == 2u) k_begin = max(k_begin, row0);
  locate_product();

  mma_clear();
  // The next slice is read into registers while the warps multiply the
  // staged one, so its global-memory latency hides behind the math.
  if (DOUBLE_BUF == 0u) {
    if (k_begin < k_end) fetch_slice(tid, row0, col0, k_begin);
    for (uint k0 = k_begin; k0 < k_end; k0 += BK) {
      barrier();  // every warp is done with the previous slice
      stage_slice(tid, 0u);
      barrier();
      if (k0 + BK < k_end) fetch_slice(tid, row0, col0, k0 + BK);
      multiply_slice(0u, warp_row, warp_col, k0);
    }
  } else {
    if (k_begin < k_end) {
      fetch_slice(tid, row0, col0, k_begin);
      stage_slice(tid, 0u);
      if (k_begin + BK < k_end) fetch_slice(tid, row0, col0, k_begin + BK);
    }
    barrier();
    uint buf = 0u;
    for (uint k0 = k_begin; k0 < k_end; k0 += BK) {
      multiply_slice(buf, warp_row, warp_col, k0);
      // The other buffer was last read before the previous barrier.
      if (k0 + BK < k_end) {
        stage_slice(tid, buf ^ 1u);
        if (k0 + 2u * BK < k_end) fetch_slice(tid, row0, col0, k0 + 2u * BK);
      }
      barrier();
      buf ^= 1u;
    }
  }

  // Uniform over the workgroup, so the staged path's barriers stay uniform.
  if (direct_store() && row0 + BM <= p.m && col0 + BN <= p.n) {
    mma_store_direct(row0 + warp_row, col0 + warp_col);
    return;
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
