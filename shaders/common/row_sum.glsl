// One workgroup per row: row_sum() adds a pair of per-invocation partial
// sums over the workgroup (row_max() takes a maximum) in a fixed tree
// order, so the result is the same bits on every run (no atomics), and
// hands it to every invocation. Call them in uniform control flow (they
// hold barriers).
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

// The maximum of one value per invocation, as row_sum (attention's softmax).
float row_max(float v) {
  uint lid = gl_LocalInvocationID.x;
  barrier();
  row_acc[lid].x = v;
  barrier();
  for (uint w = kRowThreads / 2u; w > 0u; w >>= 1) {
    if (lid < w) row_acc[lid].x = max(row_acc[lid].x, row_acc[lid + w].x);
    barrier();
  }
  return row_acc[0].x;
}

// Rows are spread over at most 65535 workgroups: each strides over them.
#define FOR_EACH_ROW(r, rows) for (uint r = gl_WorkGroupID.x; r < (rows); r += gl_NumWorkGroups.x)
#endif
