// The tensor-core implementation of gemm_mma.comp's multiply-accumulate
// step (mma_emulated.glsl is the other; both define the same functions:
// mma_warp, mma_lane, mma_clear, mma_step, mma_stage, mma_store_direct).
// A warp is one subgroup of LANES invocations, holding its FRAGS_M x
// FRAGS_N fp32 accumulators as GL_NV_cooperative_matrix fragments of
// 16 x 16; operands are fp16 fragments loaded from the staged tiles.
// NV cooperative-matrix loads want 16-byte aligned rows: the tiles' row
// strides and every fragment's offset are multiples of 8 fp16 values.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require

fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> mma_acc[FRAGS_M * FRAGS_N];

uint mma_warp() { return gl_SubgroupID; }
uint mma_lane() { return gl_SubgroupInvocationID; }

void mma_clear() {
  for (uint f = 0u; f < FRAGS_M * FRAGS_N; ++f) mma_acc[f] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
}

// K_RANGE's diagonal chunk of accumulator f: through the warp's 256 floats
// of Cs, each element summing only the k its row keeps, in plain fp32 fmas
// (a masked product would still take 0 x NaN). a_at / b_at: the chunk's
// first staged value of op(A) and op(B).
void mma_masked(uint f, uint a_at, uint b_at) {
  uint first = gl_SubgroupID * 256u;
  coopMatStoreNV(mma_acc[f], Cs, first, 16u, false);
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  for (uint e = gl_SubgroupInvocationID; e < 256u; e += LANES) {
    uint x = e / 16u, y = e % 16u;
    float s = Cs[first + e];
    for (uint q = 0u; q < 16u; ++q)
      if (diagonal_keeps(x, q)) s = fma(float(As[a_at + x * AS + q]), float(Bs[b_at + q * BS + y]), s);
    Cs[first + e] = s;
  }
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  coopMatLoadNV(mma_acc[f], Cs, first, 16u, false);
}

// acc[fm][fn] += As[rows a_row + 16 fm.., k kk..kk+15] x Bs[k kk.., columns
// b_col + 16 fn..] of the slice at a_base / b_base; k: the chunk's first k
// in the product (K_RANGE).
void mma_step(uint a_base, uint b_base, uint a_row, uint b_col, uint kk, uint k) {
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa[FRAGS_M];
  for (uint fm = 0u; fm < FRAGS_M; ++fm) coopMatLoadNV(fa[fm], As, a_base + (a_row + 16u * fm) * AS + kk, AS, false);
  for (uint fn = 0u; fn < FRAGS_N; ++fn) {
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fb;
    coopMatLoadNV(fb, Bs, b_base + kk * BS + b_col + 16u * fn, BS, false);
    for (uint fm = 0u; fm < FRAGS_M; ++fm)
      if (chunk_use(tile_row0 + a_row + 16u * fm, k) == CHUNK_ALL)
        mma_acc[fm * FRAGS_N + fn] = coopMatMulAddNV(fa[fm], fb, mma_acc[fm * FRAGS_N + fn]);
  }
  if (K_RANGE != 0u)
    for (uint fm = 0u; fm < FRAGS_M; ++fm)
      if (chunk_use(tile_row0 + a_row + 16u * fm, k) == CHUNK_DIAGONAL)
        for (uint fn = 0u; fn < FRAGS_N; ++fn)
          mma_masked(fm * FRAGS_N + fn, a_base + (a_row + 16u * fm) * AS + kk, b_base + kk * BS + b_col + 16u * fn);
}

// Accumulator f, row-major with stride 16, into Cs from `first` on.
void mma_stage(uint f, uint first) { coopMatStoreNV(mma_acc[f], Cs, first, 16u, false); }

// Every accumulator straight to C from (row, col) on (direct_store(): no
// epilogue needs the elements; C's rows and offsets are multiples of 8
// values). alpha scales in fp32; the conversion to fp16 is the driver's
// (OpFConvert, round to nearest on the GPUs we know; store_c rounds in
// integer code), at most one rounding either way.
void mma_store_direct(uint row, uint col) {
  for (uint f = 0u; f < FRAGS_M * FRAGS_N; ++f) {
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> h = fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(mma_acc[f] * p.alpha);
    coopMatStoreNV(h, c, c0 + (row + 16u * (f / FRAGS_N)) * p.ldc + col + 16u * (f % FRAGS_N), p.ldc, false);
  }
}
