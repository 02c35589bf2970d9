#include "row_plan.hpp"

#include <algorithm>

#include "op_util.hpp"

namespace vkamp::ops::detail {

namespace {

constexpr uint32_t kGroupSize = 128;        // row_sum.glsl's kGroupSize
constexpr uint32_t kMaxGroups = 65535;      // per dispatch; the shaders stride past it
constexpr uint32_t kThreadMaxCols = 4096;   // longer rows are better split over a workgroup
constexpr uint64_t kLoopLimit = 65535;      // lavapipe leaves a loop after this many iterations

}  // namespace

RowPlan row_plan(const Context& ctx, uint32_t rows, uint32_t cols, uint32_t passes) {
  bool thread = ctx.paths().row_per_thread.value_or(ctx.info().type == VK_PHYSICAL_DEVICE_TYPE_CPU);
  // Every loop of one invocation counts against lavapipe's limit (it seems
  // to be shared), so bound the rows it strides over times their columns.
  const uint64_t rows_each = div_up(rows, uint64_t(kGroupSize) * kMaxGroups);
  if (cols > kThreadMaxCols || rows_each * (uint64_t(passes) * cols + 1) >= kLoopLimit) thread = false;
  RowPlan plan;
  plan.thread = thread;
  plan.groups.x = std::min(thread ? div_up(rows, kGroupSize) : rows, kMaxGroups);
  return plan;
}

}  // namespace vkamp::ops::detail
