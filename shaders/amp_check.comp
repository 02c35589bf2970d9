#version 450
#extension GL_GOOGLE_include_directive : require
// The fused AMP pass, one read of every gradient: per workgroup, the count
// of non-finite values and the sum of squares of the finite ones; per
// tensor, the underflow accounting (TensorStats: zeros, subnormals, values
// the scale is saving, non-finite count, largest |v|); on histogram steps,
// also the exponent histogram of the unscaled gradients per tensor (log2
// bins from 2^-40 to 2^16, plus zero, inf and NaN). step_control.comp
// reduces the partials and publishes the tensor statistics.
//
// Each workgroup reads one contiguous chunk, tensor by tensor (a gap between
// tensors is padding: in the norm and the non-finite count, in no tensor's
// statistics), so a tensor's statistics cost one workgroup reduction and one
// set of atomics per chunk it touches, not per element.
//
// ACCUMULATED = 1 (grad_accum > 1) reads the fp32 sum of the micro-batch
// gradients (grad_accumulate.comp) instead of the 16-bit gradient; an inf or
// NaN of any micro-batch survives into that sum. The histograms and the
// statistics then describe the sum too, not one micro-batch's 16-bit values.
//
// PER_LAYER = 1 (--loss-scale per-layer): each tensor's gradients carry its
// scale group's scale (layer[tensor_group[t]].scale, set by the previous
// step's layer_scale.comp), not st.scale (the output group's): the flush
// edge and the histogram unscale by the tensor's own, and the norm adds each
// value times st.scale / its scale, so that step_control's division by
// st.scale unscales it. Those ratios are powers of two, exact; a bf16 or
// cb16 gradient near its format's top times a large ratio could make the
// shown norm inf (the decision never reads the norm: per-layer runs refuse
// norm clipping).
//
// The norm cannot overflow for finite gradients: each partial is kept as
// (k, s) meaning s * 4^k, where 2^k is the largest binade seen and every
// square is taken of |v| * 2^-k < 2 (LAPACK nrm2's scaled sum, with power-of-
// two scale factors so the rescaling itself is exact). A plain sum of v*v
// overflows fp32 once |v| > 1.8e19, which bf16 and cb16 gradients reach at a
// large loss scale; dividing by the scale first would not help at a scale
// below 1. The overflow decision comes only from the non-finite count.
#include "types.glsl"
#include "nonfinite.glsl"
#include "format_edges.glsl"
#include "vkamp/gpu_abi/train_state.h"
#include "vkamp/gpu_abi/layer_scale_state.h"
#include "elementwise.glsl"

layout(constant_id = 0) const uint ACCUMULATED = 0;
layout(constant_id = 1) const uint PER_LAYER = 0;
layout(std430, binding = 0) readonly buffer State { TrainState st; };
layout(std430, binding = 1) readonly buffer Params { TrainParams prm; };
layout(std430, binding = 2) readonly buffer Grads { sfp g[]; };
layout(std430, binding = 3) readonly buffer Tensors { uvec2 tensor_range[]; };  // [begin, end), ascending
layout(std430, binding = 4) writeonly buffer PartialSq { vec2 partial_sq[]; };   // (s, k): s * 4^k
layout(std430, binding = 5) writeonly buffer PartialBad { uint partial_bad[]; };
layout(std430, binding = 6) buffer Hist { uint hist[]; };  // tensors x kHistBins, zeroed by step_control
layout(std430, binding = 7) readonly buffer GradSum { float gsum[]; };  // ACCUMULATED only
layout(std430, binding = 8) buffer Stats { TensorStats stats[]; };  // per tensor, zeroed by step_control
layout(std430, binding = 9) readonly buffer Layers { LayerScale layer[]; };        // PER_LAYER only
layout(std430, binding = 10) readonly buffer TensorGroup { uint tensor_group[]; };  // PER_LAYER only
#include "vkamp/gpu_abi/amp_check.h"

shared float sq[256];
shared int sk[256];
shared uint bad[256];
shared uvec4 counts[256];  // zeros, subnormal, lost_unscaled, nonfinite
shared uint maxabs[256];

uint bin_of(float v) {
  if (is_nan_bits(v)) return kHistNan;
  if (is_inf_bits(v)) return kHistInf;
  if (v == 0.0) return kHistZero;
  int e = int((floatBitsToUint(v) >> 23) & 0xFFu) - 127;  // floor(log2 v) for normal v
  return uint(clamp(e - kHistMinExp, 0, int(kHistLogBins) - 1));
}

// The first tensor that ends after element i (tensors when none does).
uint first_tensor_after(uint i) {
  uint lo = 0u, hi = prm.tensors;
  while (lo < hi) {
    uint mid = (lo + hi) / 2u;
    if (tensor_range[mid].y <= i) lo = mid + 1u;
    else hi = mid;
  }
  return lo;
}

// The scale tensor t's gradients carry (padding: st.scale's).
float scale_of(uint t) { return PER_LAYER != 0u && t < prm.tensors ? layer[tensor_group[t]].scale : st.scale; }

void main() {
  bool histogram = prm.histogram_interval != 0u && st.step % prm.histogram_interval == 0u;
  float s = 0.0;
  int k = -126;              // binade of the largest |v| so far, clamped so 2^-k stays finite
  float down = pow2i(126);   // 2^-k
  uint nb = 0u;
  uint lid = gl_LocalInvocationID.x;
  uint chunk = ((p.n + gl_NumWorkGroups.x - 1u) / gl_NumWorkGroups.x + 255u) & ~255u;
  uint pos = min(gl_WorkGroupID.x * chunk, p.n), end = min(pos + chunk, p.n);
  uint t = first_tensor_after(pos);
  // Uniform across the workgroup: pos, end, t and the segment below.
  while (pos < end) {
    bool in_tensor = t < prm.tensors && tensor_range[t].x <= pos;
    uint seg_end = in_tensor ? min(tensor_range[t].y, end) : (t < prm.tensors ? min(tensor_range[t].x, end) : end);
    float scale = in_tensor ? scale_of(t) : st.scale;
    float inv_scale = 1.0 / scale, to_global = st.scale / scale;  // 1.0 unless PER_LAYER
    // |v| at or below this rounds to zero in the format once divided by S:
    // half the smallest subnormal (round to nearest even), times S.
    uint lost_edge = scaled_by_pow2_bits(scale, kFormatMinSubnormalExp - 1);
    uvec4 c = uvec4(0u);
    uint m = 0u;
    for (uint i = pos + lid; i < seg_end; i += 256u) {
      float v = ACCUMULATED != 0u ? gsum[i] : sfp2f(g[i]);
      uint a = floatBitsToUint(v) & 0x7FFFFFFFu;
      if (is_nonfinite(v)) {
        nb += 1u;
        c.w += 1u;
      } else {
        float vn = PER_LAYER != 0u ? v * to_global : v;  // for the norm
        int e = clamp(int((floatBitsToUint(vn) >> 23) & 0xFFu) - 127, -126, 126);
        if (e > k) {
          s *= pow2i(2 * (k - e));
          k = e;
          down = pow2i(-k);
        }
        float x = abs(vn) * down;
        s += x * x;
        m = max(m, a);
        if (a == 0u) c.x += 1u;
        else {
          if (a < kFormatMinNormalBits) c.y += 1u;
          if (a <= lost_edge) c.z += 1u;
        }
      }
      if (histogram && in_tensor) atomicAdd(hist[t * kHistBins + bin_of(abs(v) * inv_scale)], 1u);
    }
    if (in_tensor) {
      counts[lid] = c;
      maxabs[lid] = m;
      barrier();
      for (uint w = 128u; w > 0u; w >>= 1) {
        if (lid < w) {
          counts[lid] += counts[lid + w];
          maxabs[lid] = max(maxabs[lid], maxabs[lid + w]);
        }
        barrier();
      }
      if (lid == 0u) {
        uvec4 r = counts[0];
        if (r.x != 0u) atomicAdd(stats[t].zeros, r.x);
        if (r.y != 0u) atomicAdd(stats[t].subnormal, r.y);
        if (r.z != 0u) atomicAdd(stats[t].lost_unscaled, r.z);
        if (r.w != 0u) atomicAdd(stats[t].nonfinite, r.w);
        if (maxabs[0] != 0u) atomicMax(stats[t].max_abs_bits, maxabs[0]);
      }
      barrier();  // counts[] is reused by the next segment
      t += seg_end == tensor_range[t].y ? 1u : 0u;
    }
    pos = seg_end;
  }
  sq[lid] = s;
  sk[lid] = k;
  bad[lid] = nb;
  barrier();
  for (uint w = 128u; w > 0u; w >>= 1) {
    if (lid < w) {
      int ka = sk[lid], kb = sk[lid + w], km = max(ka, kb);
      sq[lid] = sq[lid] * pow2i(2 * (ka - km)) + sq[lid + w] * pow2i(2 * (kb - km));
      sk[lid] = km;
      bad[lid] += bad[lid + w];
    }
    barrier();
  }
  if (lid == 0u) {
    partial_sq[gl_WorkGroupID.x] = vec2(sq[0], float(sk[0]));
    partial_bad[gl_WorkGroupID.x] = bad[0];
  }
}
