// Per-layer loss scaling's state on the GPU: one LayerScale
// per scale group. (layer_scale.h beside it is layer_scale.comp's push
// constants.) Written once for both sides like train_state.h: valid GLSL
// (layer_scale.comp, amp_check.comp and optimizer.comp include it) and C++
// (layer_scales.hpp includes it inside namespace vkamp::train). Every field
// is 4 bytes, so std430 lays the struct out as C++ does.
#ifndef VKAMP_LAYER_SCALE_STATE_H
#define VKAMP_LAYER_SCALE_STATE_H

#ifdef __cplusplus
#define VKAMP_UINT_CONST(name, value) inline constexpr uint32_t name = value;
#else
#define VKAMP_UINT_CONST(name, value) const uint name = uint(value);
#endif

// Steps of amax history per group (Transformer Engine's delayed scaling
// keeps such a window), and the doublings of headroom left between the
// history's largest gradient and the format's largest value: two, as the
// group's activation gradients (dZ, dX), which the history does not see,
// may be larger than its parameter gradients (one doubling skipped 111 of
// 751 steps of bench/per_layer_scaling.sh, two 65 of 705).
VKAMP_UINT_CONST(kLayerAmaxHistory, 16)
VKAMP_UINT_CONST(kLayerMarginDoublings, 2)

// One per scale group (graph/scale_groups.hpp), in forward order.
struct LayerScale {
  float scale;           // S_g: what the group's gradients carry in the next step
  float inv_scale;       // 1 / the S_g this step's gradients carried (optimizer.comp)
  int upstream;          // the group its input gradient flows into; -1: none
  uint frozen;           // 1: the scale never moves (ScalerConfig::fixed_layer_scales)
  uint overflow_total;   // steps where this group's gradients held an inf or NaN
  uint updates;          // steps counted: amax[updates % kLayerAmaxHistory] is the newest
  float amax_window;     // the largest entry of amax[] (what set `scale`)
  uint pad;
  float amax[16];        // the largest |gradient| / S_g per step (unscaled); 0 = none
};

#undef VKAMP_UINT_CONST
#endif
