// Rows onto invocations, two ways, picked by the host per device
// (engine/src/ops/row_plan.hpp) through specialization constant 0 of every
// shader that includes this:
//   ROW_THREAD = 0 (GPUs): one workgroup per row. Each invocation strides
//     over the row's columns from row_lane() by kRowThreads; row_sum() adds
//     a pair of per-invocation partial sums over the workgroup (row_max()
//     takes a maximum) in a fixed tree order through shared memory, and
//     hands the result to every invocation. Call them in uniform control
//     flow (they hold barriers).
//   ROW_THREAD = 1 (CPU drivers): one invocation per row, kGroupSize rows per
//     workgroup. row_lane() is 0 and kRowThreads 1, so the same loops visit
//     every column in order in fp32, and row_sum()/row_max() return their
//     argument: no shared memory, no barriers, which cost lavapipe far more
//     than a short row's arithmetic. The host keeps a row's loops under
//     lavapipe's 65535-iteration limit.
// Either way the result is the same bits on every run (no atomics); the two
// ways add in different orders, so their bits differ from each other.
#ifndef VKAMP_ROW_SUM_GLSL
#define VKAMP_ROW_SUM_GLSL
layout(constant_id = 0) const uint ROW_THREAD = 0;
const uint kGroupSize = 128u;
const uint kRowThreads = ROW_THREAD != 0u ? 1u : kGroupSize;  // invocations per row
layout(local_size_x = 128) in;

shared vec2 row_acc[kGroupSize];

// This invocation's first column of its row.
uint row_lane() { return ROW_THREAD != 0u ? 0u : gl_LocalInvocationID.x; }

vec2 row_sum(vec2 v) {
  if (ROW_THREAD != 0u) return v;
  uint lid = gl_LocalInvocationID.x;
  barrier();  // every invocation has read the previous call's row_acc[0]
  row_acc[lid] = v;
  barrier();
  for (uint w = kGroupSize / 2u; w > 0u; w >>= 1) {
    if (lid < w) row_acc[lid] += row_acc[lid + w];
    barrier();
  }
  return row_acc[0];
}

// The maximum of one value per invocation, as row_sum (attention's softmax).
float row_max(float v) {
  if (ROW_THREAD != 0u) return v;
  uint lid = gl_LocalInvocationID.x;
  barrier();
  row_acc[lid].x = v;
  barrier();
  for (uint w = kGroupSize / 2u; w > 0u; w >>= 1) {
    if (lid < w) row_acc[lid].x = max(row_acc[lid].x, row_acc[lid + w].x);
    barrier();
  }
  return row_acc[0].x;
}

// Rows are spread over at most 65535 workgroups: each invocation (thread
// path) or workgroup (group path) strides over them.
uint row_first() { return ROW_THREAD != 0u ? gl_GlobalInvocationID.x : gl_WorkGroupID.x; }
uint row_stride() { return ROW_THREAD != 0u ? gl_NumWorkGroups.x * kGroupSize : gl_NumWorkGroups.x; }
#define FOR_EACH_ROW(r, rows) for (uint r = row_first(); r < (rows); r += row_stride())
#endif
