#version 450
#extension GL_GOOGLE_include_directive : require
// C[m x n] = alpha * op(A) op(B) (+ C when accumulate), row-major, fp32
// accumulation. A 64x64 tile of C per 256-thread workgroup, each thread a
// 4x4 block; A and B tiles of depth 16 staged in shared memory as fp32.
// Loads are bounds-checked, so m, n, k need not be tile multiples.
// TRANS_A: A is stored k x m. TRANS_B: B is stored n x k.
// TILED = 0 reads the operands straight from memory, with no shared memory
// and no barriers: 1.5-2x faster on lavapipe, whose barriers in a
// 256-invocation workgroup are costly and whose CPU caches do the staging
// (bench/NOTES.md). GPUs keep the shared-memory tiles.
#include "types.glsl"

layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const uint TRANS_A = 0;
layout(constant_id = 1) const uint TRANS_B = 0;
layout(constant_id = 2) const uint TILED = 1;

layout(std430, binding = 0) readonly buffer A { sfp a[]; };
layout(std430, binding = 1) readonly buffer B { sfp b[]; };
layout(std430, binding = 2) buffer C { sfp c[]; };
layout(push_constant) uniform Push { uint m, n, k; float alpha; uint accumulate; } p;

const uint BM = 64, BN = 64, BK = 16;
shared float As[BK][BM + 1];  // +1 keeps column reads off one bank
shared float Bs[BK][BN + 1];

float load_a(uint i, uint kk) {  // op(A)[i, kk]
  if (i >= p.m || kk >= p.k) return 0.0;
  return TRANS_A != 0u ? sfp2f(a[kk * p.m + i]) : sfp2f(a[i * p.k + kk]);
}
float load_b(uint kk, uint j) {  // op(B)[kk, j]
  if (kk >= p.k || j >= p.n) return 0.0;
  return TRANS_B != 0u ? sfp2f(b[j * p.k + kk]) : sfp2f(b[kk * p.n + j]);
}

void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint tid = ty * 16u + tx;
  uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;

  float acc[4][4];
  for (uint r = 0u; r < 4u; ++r)
    for (uint q = 0u; q < 4u; ++q) acc[r][q] = 0.0;

  if (TILED == 0u) {
    for (uint kk = 0u; kk < p.k; ++kk) {
      float av[4], bv[4];
      for (uint r = 0u; r < 4u; ++r) av[r] = load_a(row0 + ty + 16u * r, kk);
      for (uint q = 0u; q < 4u; ++q) bv[q] = load_b(kk, col0 + tx + 16u * q);
      for (uint r = 0u; r < 4u; ++r)
        for (uint q = 0u; q < 4u; ++q) acc[r][q] = fma(av[r], bv[q], acc[r][q]);
    }
  }
  for (uint k0 = 0u; TILED != 0u && k0 < p.k; k0 += BK) {
    // 1024 values per tile, 4 per thread; the fastest-moving index follows
    // the operand's contiguous dimension so global loads coalesce.
    for (uint e = 0u; e < 4u; ++e) {
      uint idx = e * 256u + tid;
      uint ai = TRANS_A != 0u ? idx % BM : idx / BK;
      uint ak = TRANS_A != 0u ? idx / BM : idx % BK;
      As[ak][ai] = load_a(row0 + ai, k0 + ak);
      uint bj = TRANS_B != 0u ? idx / BK : idx % BN;
      uint bk = TRANS_B != 0u ? idx % BK : idx / BN;
      Bs[bk][bj] = load_b(k0 + bk, col0 + bj);
    }
    barrier();
    for (uint kk = 0u; kk < BK; ++kk) {
      float av[4], bv[4];
      for (uint r = 0u; r < 4u; ++r) av[r] = As[kk][ty + 16u * r];
      for (uint q = 0u; q < 4u; ++q) bv[q] = Bs[kk][tx + 16u * q];
      for (uint r = 0u; r < 4u; ++r)
        for (uint q = 0u; q < 4u; ++q) acc[r][q] = fma(av[r], bv[q], acc[r][q]);
    }
    barrier();
  }

  for (uint r = 0u; r < 4u; ++r) {
    uint i = row0 + ty + 16u * r;
    if (i >= p.m) continue;
    for (uint q = 0u; q < 4u; ++q) {
      uint j = col0 + tx + 16u * q;
      if (j >= p.n) continue;
      float v = p.alpha * acc[r][q];
      if (p.accumulate != 0u) v += sfp2f(c[i * p.n + j]);
      c[i * p.n + j] = f2sfp(v);
    }
  }
}
