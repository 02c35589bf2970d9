// The plain-GLSL implementation of gemm_mma.comp's multiply-accumulate
// step, for devices without cooperative matrices (lavapipe runs the tensor-
// core GEMM's tiling, staging, edges, batching, split-k and epilogue through
// it in the tests). The same functions as mma_coopmat.glsl: a
// 16 x 16 accumulator is spread over the warp's LANES invocations, lane l
// holding elements e = l + LANES t (row e / 16, column e % 16), and each
// element sums its 16 fp16 products in fp32 (exact products: 11 x 11
// significand bits fit fp32's 24).
// A warp here is LANES consecutive invocations of the workgroup, not a
// hardware subgroup: nothing crosses lanes, so any subgroup size works.
const uint MMA_PER_LANE = 256u / LANES;
float mma_acc[FRAGS_M * FRAGS_N][MMA_PER_LANE];

uint mma_warp() { return gl_LocalInvocationIndex / LANES; }
uint mma_lane() { return gl_LocalInvocationIndex % LANES; }

void mma_clear() {
  for (uint f = 0u; f < FRAGS_M * FRAGS_N; ++f)
    for (uint t = 0u; t < MMA_PER_LANE; ++t) mma_acc[f][t] = 0.0;
}

void mma_step(uint a_row, uint b_col, uint kk) {
  for (uint fm = 0u; fm < FRAGS_M; ++fm)
    for (uint fn = 0u; fn < FRAGS_N; ++fn)
      for (uint t = 0u; t < MMA_PER_LANE; ++t) {
        uint e = mma_lane() + LANES * t;
        uint ar = (a_row + 16u * fm + e / 16u) * AS + kk, bc = kk * BS + b_col + 16u * fn + e % 16u;
        float s = mma_acc[fm * FRAGS_N + fn][t];
        for (uint q = 0u; q < 16u; ++q) s = fma(float(As[ar + q]), float(Bs[bc + q * BS]), s);
        mma_acc[fm * FRAGS_N + fn][t] = s;
      }
}

void mma_stage(uint f, uint first) {
  for (uint t = 0u; t < MMA_PER_LANE; ++t) Cs[first + mma_lane() + LANES * t] = mma_acc[f][t];
}
