// One workgroup per row: row_sum() adds a pair of per-invocation partial
// sums over the workgroup in a fixed tree order, so the result is the same
// bits on every run (no atomics), and hands it to every invocation. Call it
// in uniform control flow (it holds barriers).
#ifndef VKAMP_ROW_SUM_GLSL
#define VKAMP_ROW_SUM_GLSL
const uint kRowThreads = 128u;
layout(local_size_x = 128) in;

shared vec2 row_acc[kRowThreads];

vec2 row_sum(vec2 v) {
  uint lid = gl_LocalInvocationID.x;
  barrier();  // every invocation has read the previous call's row_acc[0]
  row_acc[lid] = v;
  barrier();
  for (uint w = kRowThreads / 2u; w > 0u; w >>= 1) {
    if (lid < w) row_acc[lid] += row_acc[lid + w];
    barrier();
  }
  return row_acc[0];
}

// Rows are spread over at most 65535 workgroups: each strides over them.
#define FOR_EACH_ROW(r, rows) for (uint r = gl_WorkGroupID.x; r < (rows); r += gl_NumWorkGroups.x)
#endif
