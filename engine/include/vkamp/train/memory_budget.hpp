// A run's device memory against the device's budget, before anything is
// allocated: the plan (graph::MemoryReport) from the layouts and the
// executor's plan, and the error a plan that cannot fit raises.
#pragma once
#include <cstdint>
#include <string>

#include "vkamp/config_error.hpp"
#include "vkamp/context.hpp"
#include "vkamp/graph/memory_plan.hpp"

namespace vkamp::train {

// The plan passes the budget: exit 2, before any allocation. The message
// gives the plan's split and the budget; callers that know the run's
// settings add the ones that would fit (app/memory_fit.cpp).
class MemoryPlanError : public ConfigError {
 public:
  MemoryPlanError(const std::string& msg, graph::MemoryReport plan, uint64_t budget)
      : ConfigError(msg), plan(std::move(plan)), budget(budget) {}
  graph::MemoryReport plan;
  uint64_t budget;
};

// `bytes` in MiB with `decimals` decimals ("2048.0"), the unit left to the caller.
std::string mib_text(uint64_t bytes, int decimals);
// "frozen base 2098.0, parameters 48.2, ..." in MiB, with the total.
std::string memory_split(const graph::MemoryReport& r);
// What a run on ctx may plan for: the device-local heap's budget less what
// the context holds already.
uint64_t available_device_memory(const Context& ctx);
// Throws MemoryPlanError when `plan` passes available_device_memory(ctx).
void check_memory_fits(const Context& ctx, const graph::MemoryReport& plan);

}  // namespace vkamp::train
