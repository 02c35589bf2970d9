// The plain-GLSL implementation of gemm_mma.comp's multiply-accumulate
// step, for devices without cooperative matrices (lavapipe runs the tensor-
// core GEMM's tiling, staging, edges, batching, split-k, causal masks and
// epilogue through it in the tests). The same functions as
// mma_coopmat.glsl: a 16 x 16 accumulator is spread over the warp's LANES
// invocations, lane l holding elements e = l + LANES t (row e / 16, column
// e % 16), and each element sums its 16 fp16 products in fp32 (exact
// products: 11 x 11 significand bits fit fp32's 24), in k order. So every
// tile shape, BK and buffering gives the same bits here.
// A warp here is LANES consecutive invocations of the workgroup, not a
// hardware subgroup: nothing crosses lanes, so any LANES dividing 256 works.
const uint MMA_PER_LANE = 256u / LANES;
float mma_acc[FRAGS_M * FRAGS_N][MMA_PER_LANE];

uint mma_warp() { return gl_LocalInvocationIndex / LANES; }
uint mma_lane() { return gl_LocalInvocationIndex % LANES; }

void mma_clear() {
  for (uint f = 0u; f < FRAGS_M * FRAGS_N; ++f)
    for (uint t = 0u; t < MMA_PER_LANE; ++t) mma_acc[f][t] = 0.0;
}

// acc[fm][fn] += the staged op(A) rows a_row + 16 fm.., k kk..kk+15 (slice
// at a_base) x op(B) k kk.., columns b_col + 16 fn.. (at b_base); k is the
// chunk's first k in the product (K_RANGE).
void mma_step(uint a_base, uint b_base, uint a_row, uint b_col, uint kk, uint k) {
  for (uint fm = 0u; fm < FRAGS_M; ++fm) {
    uint use = chunk_use(tile_row0 + a_row + 16u * fm, k);
    if (use == CHUNK_NONE) continue;
    for (uint fn = 0u; fn < FRAGS_N; ++fn)
      for (uint t = 0u; t < MMA_PER_LANE; ++t) {
        uint e = mma_lane() + LANES * t;
        uint ar = a_base + (a_row + 16u * fm + e / 16u) * AS + kk, bc = b_base + kk * BS + b_col + 16u * fn + e % 16u;
        float s = mma_acc[fm * FRAGS_N + fn][t];
        for (uint q = 0u; q < 16u; ++q)
          if (use == CHUNK_ALL || diagonal_keeps(e / 16u, q)) s = fma(float(As[ar + q]), float(Bs[bc + q * BS]), s);
        mma_acc[fm * FRAGS_N + fn][t] = s;
      }
  }
}

void mma_stage(uint f, uint first) {
  for (uint t = 0u; t < MMA_PER_LANE; ++t) Cs[first + mma_lane() + LANES * t] = mma_acc[f][t];
}

// Every accumulator straight to C from (row, col) on (direct_store(): no
// epilogue, so store_c only scales and rounds).
void mma_store_direct(uint row, uint col) {
  for (uint f = 0u; f < FRAGS_M * FRAGS_N; ++f)
    for (uint t = 0u; t < MMA_PER_LANE; ++t) {
      uint e = mma_lane() + LANES * t;
      store_c(row + 16u * (f / FRAGS_N) + e / 16u, col + 16u * (f % FRAGS_N) + e % 16u, mma_acc[f][t]);
    }
}
