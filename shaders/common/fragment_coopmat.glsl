// 16 x 16 fragments on tensor cores (GL_NV_cooperative_matrix; the ".khr"
// build is translated from it): the attention kernels' multiply-accumulate.
// fragment_emulated.glsl defines the same functions in plain GLSL:
//   warp_id(), lane_id(), warp_sync(),
//   frag_zero(f), frag_mma(f, ...), frag_mma_masked(f, ..., keep),
//   frag_store(f, at, ld).
// A warp is one subgroup of LANES invocations holding NACC fp32
// accumulators; operands are fp16 fragments loaded from the shared array
// hs, accumulators stored to the shared array fs (both declared by the
// includer, with NACC and LANES). Loads want 16-byte aligned rows: every
// hs offset and stride is a multiple of 8 values, every fs one of 4.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require

fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> frag_acc[NACC];

uint warp_id() { return gl_SubgroupID; }
uint lane_id() { return gl_SubgroupInvocationID; }
// Makes one lane's shared-memory writes visible to the warp's other lanes.
void warp_sync() {
  subgroupMemoryBarrierShared();
  subgroupBarrier();
}

void frag_zero(uint f) { frag_acc[f] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0); }

// acc[f] += A B: A the 16 x 16 block of hs at a_at (row-major, row stride
// a_ld); B's element (k, n) at b_at + k b_ld + n, or at b_at + n b_ld + k
// when b_cols (B stored by columns: the transpose of row-major rows).
void frag_mma(uint f, uint a_at, uint a_ld, uint b_at, uint b_ld, bool b_cols) {
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa, fb;
  coopMatLoadNV(fa, hs, a_at, a_ld, false);
  if (b_cols) coopMatLoadNV(fb, hs, b_at, b_ld, true);  // the layout operand must be a constant
  else coopMatLoadNV(fb, hs, b_at, b_ld, false);
  frag_acc[f] = coopMatMulAddNV(fa, fb, frag_acc[f]);
}

// acc[f][x][y] += sum over the k = q that row x keeps (keep 1: q <= x,
// keep 2: q >= x) of A[x][q] B[q][y], in plain fp32 fmas (frag_row_dot)
// through 256 floats of fs at `scratch`: a product with a masked 0 would
// still take 0 x NaN. Warp-uniform control flow only.
void frag_mma_masked(uint f, uint a_at, uint a_ld, uint b_at, uint b_ld, bool b_cols, uint keep, uint scratch) {
  coopMatStoreNV(frag_acc[f], fs, scratch, 16u, false);
  warp_sync();
  for (uint e = gl_SubgroupInvocationID; e < 256u; e += LANES)
    fs[scratch + e] = frag_row_dot(fs[scratch + e], e / 16u, e % 16u, a_at, a_ld, b_at, b_ld, b_cols, keep);
  warp_sync();
  coopMatLoadNV(frag_acc[f], fs, scratch, 16u, false);
  warp_sync();
}

// acc[f] into fs, row-major from `at` with row stride ld.
void frag_store(uint f, uint at, uint ld) { coopMatStoreNV(frag_acc[f], fs, at, ld, false); }
