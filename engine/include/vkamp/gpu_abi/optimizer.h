// optimizer.comp (train::StepProgram): the fused update of parameters
// [first, first + n), with weight decay where `decay` is set, unscaled by
// the global 1/S, or by the per-layer scale of `group`.
#ifndef VKAMP_INTERFACE_OPTIMIZER_H
#define VKAMP_INTERFACE_OPTIMIZER_H
#include "macros.h"

VKAMP_PUSH(OptimizerPush)
  uint first, n, decay;
  uint group;  // per-layer loss scaling's group, or kNoScaleGroup
VKAMP_PUSH_END(OptimizerPush, p, 16)

#ifdef __cplusplus
namespace vkamp::shader {
inline constexpr uint32_t kNoScaleGroup = 0xFFFFFFFFu;
}
#else
const uint kNoScaleGroup = 0xFFFFFFFFu;
#endif

// state, params, grads, master, moment1, moment2, working, grad_sum, layers
VKAMP_SHADER(OptimizerShader, optimizer, 9, OptimizerPush)

#endif
