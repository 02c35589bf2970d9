// glu.comp (ops::glu_forward/backward): y = f(gate) * up over n elements,
// or its two gradients.
#ifndef VKAMP_INTERFACE_GLU_H
#define VKAMP_INTERFACE_GLU_H
#include "macros.h"

// What the backward does with each gradient: skip it, write it, or add it
// to the old value.
#ifdef __cplusplus
namespace vkamp::shader {
inline constexpr uint32_t kGluSkip = 0, kGluWrite = 1, kGluAdd = 2;
}
#else
const uint kGluSkip = 0u, kGluWrite = 1u, kGluAdd = 2u;
#endif

VKAMP_PUSH(GluPush)
  uint n;
  uint gate_mode, up_mode;  // backward: kGluSkip, kGluWrite or kGluAdd
VKAMP_PUSH_END(GluPush, p, 12)

VKAMP_SHADER(GluShader, glu, 5, GluPush)  // gate, up, dy, y or dgate, dup

#endif
