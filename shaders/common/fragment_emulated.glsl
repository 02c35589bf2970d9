// fragment_coopmat.glsl's functions in plain GLSL, for devices without
// cooperative matrices (lavapipe runs the attention kernels' tensor-core
// algorithm through it in the tests). A 16 x 16 accumulator is spread over
// the warp's LANES invocations, lane l holding elements e = l + LANES t
// (row e / 16, column e % 16); each element sums its 16 fp16 products in
// fp32 in k order (exact products: 11 x 11 significand bits fit fp32's 24).
// A warp here is LANES consecutive invocations, not a hardware subgroup:
// nothing crosses lanes inside a fragment operation, so warp_sync() is the
// workgroup's barrier, and the kernels call it in uniform control flow.
// The accumulators live in shared memory, each lane touching only its own
// elements: lavapipe turns a private array indexed at run time into a
// ladder of selects, and the kernels' NACC x 8 floats took about 12 s a
// pipeline to compile that way (under 1 s from shared memory). The host
// counts these WARPS x NACC x 256 floats in the emulation's shared memory.
const uint FRAG_PER_LANE = 256u / LANES;
shared float frag_acc[WARPS * NACC * 256u];
#define FRAG(f, t) frag_acc[(warp_id() * NACC + (f)) * 256u + lane_id() + LANES * (t)]

uint warp_id() { return gl_LocalInvocationIndex / LANES; }
uint lane_id() { return gl_LocalInvocationIndex % LANES; }
void warp_sync() { barrier(); }

void frag_zero(uint f) {
  for (uint t = 0u; t < FRAG_PER_LANE; ++t) FRAG(f, t) = 0.0;
}

// keep: frag_row_dot's (0 every k; 1 k <= row; 2 k >= row).
void frag_mma_kept(uint f, uint a_at, uint a_ld, uint b_at, uint b_ld, bool b_cols, uint keep) {
  for (uint t = 0u; t < FRAG_PER_LANE; ++t) {
    const uint e = lane_id() + LANES * t;
    FRAG(f, t) = frag_row_dot(FRAG(f, t), e / 16u, e % 16u, a_at, a_ld, b_at, b_ld, b_cols, keep);
  }
}
void frag_mma(uint f, uint a_at, uint a_ld, uint b_at, uint b_ld, bool b_cols) {
  frag_mma_kept(f, a_at, a_ld, b_at, b_ld, b_cols, 0u);
}
// No scratch needed: each lane masks its own elements (and no barrier, so
// warps may call it in control flow of their own).
void frag_mma_masked(uint f, uint a_at, uint a_ld, uint b_at, uint b_ld, bool b_cols, uint keep, uint scratch) {
  frag_mma_kept(f, a_at, a_ld, b_at, b_ld, b_cols, keep);
}

void frag_store(uint f, uint at, uint ld) {
  for (uint t = 0u; t < FRAG_PER_LANE; ++t) {
    const uint e = lane_id() + LANES * t;
    fs[at + (e / 16u) * ld + e % 16u] = FRAG(f, t);
  }
}
