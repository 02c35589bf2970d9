// How much memory a device has and how much of it one allocation, buffer
// and binding may take (DeviceInfo's memory fields), with the tests' caps.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vulkan/vulkan.h>

#include "vkamp/device_info.hpp"

namespace vkamp {

// Fills d's heaps, budgets, unified_memory, device_local_bytes,
// max_allocation and max_buffer, then lowers them (and max_storage_range)
// to the VKAMP_TEST_* caps that are set. `budget_extension`: the device
// offers VK_EXT_memory_budget.
void probe_memory(VkPhysicalDevice pd, uint32_t api_version, bool budget_extension, DeviceInfo& d);

// "64K", "3M", "2G" or a plain byte count; nullopt for anything else.
std::optional<uint64_t> parse_bytes(const std::string& text);

}  // namespace vkamp
