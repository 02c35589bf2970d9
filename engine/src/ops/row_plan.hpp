// How the row kernels (shaders/common/row_sum.glsl: layer_norm,
// layer_norm_grad, attention_softmax, attention_softmax_grad) map rows onto
// invocations on this device.
#pragma once
#include <cstdint>

#include "vkamp/context.hpp"
#include "vkamp/sequence.hpp"

namespace vkamp::ops::detail {

struct RowPlan {
  bool thread = false;  // the shaders' ROW_THREAD: one invocation per row, else one workgroup
  Groups groups;
};

// One invocation per row on CPU drivers (where the group path's barriers
// dominate), one workgroup per row elsewhere; VKAMP_ROW_KERNEL=thread|group
// overrides, for tests and benchmarks. Rows longer than 4096 (or so many that
// a thread's loops would pass lavapipe's 65535-iteration limit) always take
// the group path. `passes`: how many times the kernel loops over a row.
RowPlan row_plan(const Context& ctx, uint32_t rows, uint32_t cols, uint32_t passes);

}  // namespace vkamp::ops::detail
