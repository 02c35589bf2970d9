#version 450
#extension GL_GOOGLE_include_directive : require
// Per-layer loss scaling, after step_control: every scale
// group (graph/scale_groups.hpp) notes the 1/S_g its gradients carried this
// step (for optimizer.comp), then, unless the step was idle or the group is
// fixed, records its unscaled amax in a window of kLayerAmaxHistory steps
// and takes as its next scale the largest power of two that keeps the
// window's amax kLayerMarginDoublings below the format's largest value
// (Transformer Engine's delayed scaling, applied to loss scales); with no
// nonzero gradient in the window, it jumps up by what flushing to zero
// proves is safe. An inf or
// NaN in the group's gradients backs off that group alone: its amax entry
// becomes format_max / S_g (the true amax is at least that), and its scale
// at most S_g * backoff_factor. Then the factors the backward multiplies a
// group's input gradient by, S_upstream / S_g, and the loss gradient's
// multiplier (TrainState.scale is the output group's scale).
#include "nonfinite.glsl"
#include "vkamp/gpu_abi/train_state.h"
#include "vkamp/gpu_abi/layer_scale_state.h"

layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer State { TrainState st; };
layout(std430, binding = 1) readonly buffer Params { TrainParams prm; };
layout(std430, binding = 2) buffer Layers { LayerScale layer[]; };
layout(std430, binding = 3) writeonly buffer Factors { float factor[]; };
layout(std430, binding = 4) readonly buffer TensorGroup { uint tensor_group[]; };  // per parameter tensor
// step_control's rings, ring_size slots: the step records, and ring_size x
// tensors TensorStats (amp_check.comp's per-tensor largest |g| and inf/NaN
// count, as the gradients carried their group's scale).
layout(std430, binding = 5) readonly buffer StatsRing { TensorStats stats_ring[]; };
layout(std430, binding = 6) readonly buffer Ring { StepRecord ring[]; };
#include "vkamp/gpu_abi/layer_scale.h"

// floor(log2(x)) for a positive normal x, from its exponent bits (exact,
// where log2() may round a power of two down).
int floor_log2(float x) { return int((floatBitsToUint(x) >> 23) & 0xFFu) - 127; }

void main() {
  uint lid = gl_LocalInvocationID.x;
  // step_control's slot for this step, written just before.
  uint slot = (st.replay - 1u) % prm.ring_size;
  bool counted = ring[slot].idle == 0u;
  for (uint g = lid; g < p.groups; g += 64u) {
    float used = layer[g].scale;
    layer[g].inv_scale = 1.0 / used;
    if (!counted || layer[g].frozen != 0u) continue;
    uint bad = 0u;
    uint amax_bits = 0u;
    for (uint t = 0u; t < prm.tensors; ++t) {
      if (tensor_group[t] != g) continue;
      TensorStats s = stats_ring[slot * prm.tensors + t];
      bad += s.nonfinite;
      amax_bits = max(amax_bits, s.max_abs_bits);
    }
    float entry = (bad != 0u ? p.format_max : uintBitsToFloat(amax_bits)) / used;
    layer[g].amax[layer[g].updates % kLayerAmaxHistory] = entry;
    layer[g].updates += 1u;
    if (bad != 0u) layer[g].overflow_total += 1u;
    float window = 0.0;
    for (uint h = 0u; h < kLayerAmaxHistory; ++h) window = max(window, layer[g].amax[h]);
    layer[g].amax_window = window;
    // A group that has seen no nonzero gradient in its window has flushed
    // to zero: its unscaled amax is below format_tiny / (2 used), so a scale
    // format_max / format_tiny times larger still keeps the margin. It jumps
    // by that much a step until its gradients show. 2^126 keeps 1/S normal.
    int e = window > 0.0 ? floor_log2(p.format_max / window)
                         : floor_log2(used) + floor_log2(p.format_max / p.format_tiny);
    float next = pow2i(clamp(e - int(kLayerMarginDoublings), -126, 126));
    next = min(next, min(prm.max_loss_scale, pow2i(126)));
    if (bad != 0u) next = min(next, used * prm.backoff_factor);
    layer[g].scale = max(next, prm.min_loss_scale);
  }
  memoryBarrierBuffer();
  barrier();
  for (uint g = lid; g < p.groups; g += 64u) {
    int up = layer[g].upstream;
    factor[g] = up >= 0 ? layer[up].scale / layer[g].scale : 1.0;
  }
  if (lid == 0u && p.output_group >= 0) {
    st.scale = layer[p.output_group].scale;
    st.grad_multiplier = grad_multiplier(st.scale, prm.micro_batches);
  }
}
