// The codes the step shaders and the host share (TrainParams fields and the
// optimizer's specialization constant), defined once: this file is valid
// GLSL and C++. The host includes it from engine/src/train/step_params.cpp.
#ifndef VKAMP_STEP_CODES_H
#define VKAMP_STEP_CODES_H

#ifdef __cplusplus
#define VKAMP_CODE(name, value) inline constexpr uint32_t name = value;
#else
#define VKAMP_CODE(name, value) const uint name = value;
#endif

// TrainParams.scale_mode
VKAMP_CODE(kScaleNone, 0u)
VKAMP_CODE(kScaleStatic, 1u)
VKAMP_CODE(kScaleDynamic, 2u)
VKAMP_CODE(kScaleAuto, 3u)      // dynamic for a warm-up, then chosen from the histograms (scale_choice.h)
// per-layer scaling: step_control leaves TrainState.scale to layer_scale.comp
VKAMP_CODE(kScalePerLayer, 4u)
// TrainParams.policy: what an overflowed step does
VKAMP_CODE(kPolicySkip, 0u)
VKAMP_CODE(kPolicyApply, 1u)
VKAMP_CODE(kPolicyRetry, 2u)
// TrainParams.optimizer and optimizer.comp's OPTIMIZER
VKAMP_CODE(kOptimizerSgd, 0u)
VKAMP_CODE(kOptimizerAdam, 1u)
VKAMP_CODE(kOptimizerAdamW, 2u)

#undef VKAMP_CODE
#endif
