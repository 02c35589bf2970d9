#include "vkamp/train/memory_budget.hpp"

#include <cstdio>

namespace vkamp::train {

std::string mib_text(uint64_t bytes, int decimals) {
  char s[32];
  std::snprintf(s, sizeof s, "%.*f", decimals, double(bytes) / (1 << 20));
  return s;
}

namespace {

std::string mib(uint64_t bytes) { return mib_text(bytes, 1); }

}  // namespace

std::string memory_split(const graph::MemoryReport& r) {
  std::string s;
  auto part = [&](const char* name, uint64_t bytes) {
    if (bytes) s += (s.empty() ? "" : ", ") + std::string(name) + " " + mib(bytes);
  };
  part("frozen base", r.frozen);
  part("parameters", r.parameters);
  part("optimizer state", r.optimizer_state);
  part("activations", r.activations);
  part("workspace", r.workspace);
  return s + " (MiB; " + mib(r.total()) + " in all)";
}

uint64_t available_device_memory(const Context& ctx) {
  const uint64_t budget = ctx.info().memory_budget_bytes();
  const uint64_t held = ctx.device_bytes();
  return budget > held ? budget - held : 0;
}

void check_memory_fits(const Context& ctx, const graph::MemoryReport& plan) {
  const uint64_t available = available_device_memory(ctx);
  if (plan.total() <= available) return;
  const DeviceInfo& d = ctx.info();
  const uint64_t held = ctx.device_bytes();
  std::string where = mib(d.memory_budget_bytes()) + " MiB " +
                      (d.memory_budget ? "budget of its device-local heap (VK_EXT_memory_budget)"
                                       : "device-local heap (no VK_EXT_memory_budget: the heap's size)");
  if (!d.capped.empty()) where += ", lowered by " + d.capped;
  std::string msg = "the run needs " + mib(plan.total()) + " MiB of device memory and " + d.name + " has a " + where;
  if (held) msg += ", " + mib(held) + " MiB of it held already";
  msg += ". The plan: " + memory_split(plan) + ". Nothing was allocated.";
  if (d.unified_memory) msg += " The device's memory is the host's, shared with every other program.";
  throw MemoryPlanError(msg, plan, available);
}

}  // namespace vkamp::train
