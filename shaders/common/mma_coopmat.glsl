// The tensor-core implementation of gemm_mma.comp's multiply-accumulate
// step (mma_emulated.glsl is the other; both define the same functions:
// mma_warp, mma_lane, mma_clear, mma_step, mma_stage).
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

// acc[fm][fn] += As[rows a_row + 16 fm.., k kk..kk+15] x Bs[k kk.., columns b_col + 16 fn..].
void mma_step(uint a_row, uint b_col, uint kk) {
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa[FRAGS_M];
  for (uint fm = 0u; fm < FRAGS_M; ++fm) coopMatLoadNV(fa[fm], As, (a_row + 16u * fm) * AS + kk, AS, false);
  for (uint fn = 0u; fn < FRAGS_N; ++fn) {
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fb;
    coopMatLoadNV(fb, Bs, kk * BS + b_col + 16u * fn, BS, false);
    for (uint fm = 0u; fm < FRAGS_M; ++fm)
      mma_acc[fm * FRAGS_N + fn] = coopMatMulAddNV(fa[fm], fb, mma_acc[fm * FRAGS_N + fn]);
  }
}

// Accumulator f, row-major with stride 16, into Cs from `first` on.
void mma_stage(uint f, uint first) { coopMatStoreNV(mma_acc[f], Cs, first, 16u, false); }
