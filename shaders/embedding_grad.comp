#version 450
#extension GL_GOOGLE_include_directive : require
// The embedding's parameter gradients, first pass. Each is a sum of dy rows
// grouped by a key:
//   TOKENS = 1: dwte[v, c] = sum over rows r with ids[r] == v of dy[r, c]
//   TOKENS = 0: dwpe[t, c] = sum over batches b of dy[b * T + t, c]
// For one chunk of chunk_rows rows (tokens) or batches (positions),
// workgroup y, one invocation per (key, channel) adds the chunk's matching
// rows in order in fp32 into partial[chunk][key * C + c]; gemm_reduce.comp
// then adds the chunks in order. Deterministic and free of atomics however
// often an id repeats, and no invocation loops over more than chunk_rows
// rows (lavapipe leaves a loop after 65535 iterations, silently).
// For tokens every invocation scans the chunk's ids, O(V * N * C) id reads
// in all: fine for a character vocabulary (V ~ 100) on a GPU, too slow for
// V ~ 50k, where sorting the rows by id once (a segmented sum over the
// sorted order) would cut it to O(N * C). Ids >= vocab match no row of dwte
// (the forward made their rows NaN). A table larger than one storage
// binding is summed in views of its rows: key k of a view is id
// first_id + k, and ids outside the view match none of its keys.
// SCATTER = 1 (tokens, CPU drivers, whose few cores gain nothing from the
// scan's V * C invocations): one invocation per channel c of the chunk
// zeroes column c of every key, then adds each row's dy into the key of its
// id, in row order: the same fp32 sums in the same order as the scan (the
// same bits), in O(V + N) per invocation. It alone writes its column, so
// no atomics; the host keeps V + chunk_rows under lavapipe's loop limit.
#include "types.glsl"
#include "elementwise.glsl"

layout(constant_id = 0) const uint TOKENS = 1;
layout(constant_id = 1) const uint SCATTER = 0;

layout(std430, binding = 0) readonly buffer Ids { uint ids[]; };
layout(std430, binding = 1) readonly buffer DY { sfp dy[]; };
layout(std430, binding = 2) buffer Partial { float partial[]; };
#include "vkamp/gpu_abi/embedding_grad.h"

void main() {
  uint chunk = gl_WorkGroupID.y, first = chunk * p.chunk_rows;
  if (TOKENS != 0u && SCATTER != 0u) {
    uint c = gl_GlobalInvocationID.x, vocab = p.n / p.cols;
    if (c >= p.cols) return;
    uint col = chunk * p.n + c;  // partial[chunk][0 * C + c]
    for (uint v = 0u; v < vocab; ++v) partial[col + v * p.cols] = 0.0;
    uint end = min(p.rows, first + p.chunk_rows);
    for (uint r = first; r < end; ++r) {
      uint id = ids[r] - p.first_id;  // ids below the view wrap past it
      if (id < vocab) partial[col + id * p.cols] += sfp2f(dy[r * p.cols + c]);
    }
    return;
  }
  FOR_EACH_ELEMENT(i, p.n) {
    uint key = i / p.cols;
    uint c = i - key * p.cols;
    float s = 0.0;
    if (TOKENS != 0u) {
      uint end = min(p.rows, first + p.chunk_rows);
      for (uint r = first; r < end; ++r)
        if (ids[r] == p.first_id + key) s += sfp2f(dy[r * p.cols + c]);
    } else {
      uint end = min(p.rows / p.seq_len, first + p.chunk_rows);
      for (uint b = first; b < end; ++b) s += sfp2f(dy[(b * p.seq_len + key) * p.cols + c]);
    }
    partial[chunk * p.n + i] = s;
  }
}
