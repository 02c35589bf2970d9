#include "device_memory.hpp"

#include <algorithm>
#include <cctype>

#include "vkamp/config_error.hpp"
#include "vkamp/knobs.hpp"

namespace vkamp {

std::optional<uint64_t> parse_bytes(const std::string& text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  size_t used = 0;
  uint64_t v = 0;
  try {
    v = std::stoull(text, &used);
  } catch (...) {
    return std::nullopt;
  }
  const std::string unit = text.substr(used);
  const int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : -1;
  if (shift < 0 || v == 0 || v > (UINT64_MAX >> shift)) return std::nullopt;
  return v << shift;
}

namespace {

// A cap from the tests' knob `name`, never above `value`; recorded in d.capped.
void cap(const char* name, uint64_t& value, DeviceInfo& d) {
  const std::optional<std::string> text = env_text(name);
  if (!text) return;
  const std::optional<uint64_t> bytes = parse_bytes(*text);
  if (!bytes || *bytes < 4096)
    throw ConfigError(std::string(name) + "='" + *text + "': give a size of at least 4K (a byte count, or with K, M or G)");
  value = std::min(value, *bytes);
  d.capped += (d.capped.empty() ? "" : " ") + std::string(name) + "=" + *text;
}

}  // namespace

void probe_memory(VkPhysicalDevice pd, uint32_t api_version, bool budget_extension, DeviceInfo& d) {
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 mem2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
  if (budget_extension) mem2.pNext = &budget;
  vkGetPhysicalDeviceMemoryProperties2(pd, &mem2);
  const VkPhysicalDeviceMemoryProperties& mem = mem2.memoryProperties;
  d.memory_budget = budget_extension;
  for (uint32_t i = 0; i < mem.memoryHeapCount; ++i) {
    DeviceInfo::MemoryHeap h;
    h.size = mem.memoryHeaps[i].size;
    h.device_local = mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
    // The budget is what this process may still use plus what it uses now.
    h.budget = budget_extension && budget.heapBudget[i] ? std::min(budget.heapBudget[i], h.size) : h.size;
    d.heaps.push_back(h);
    if (h.device_local) d.device_local_bytes = std::max(d.device_local_bytes, h.size);
  }
  // Unified: the device-local heap is the host's memory (integrated GPUs,
  // CPU drivers), so mapping it directly beats staging copies. A discrete
  // GPU's small host-visible BAR window does not count.
  bool shared_type = false;
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
    auto f = mem.memoryTypes[i].propertyFlags;
    if ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) && (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) &&
        (f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT))
      shared_type = true;
  }
  d.unified_memory = shared_type && (d.type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
                                     d.type == VK_PHYSICAL_DEVICE_TYPE_CPU);

  VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceMaintenance4Properties m4{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES};
  VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props2.pNext = &m3;
  if (api_version >= VK_API_VERSION_1_3) m3.pNext = &m4;
  vkGetPhysicalDeviceProperties2(pd, &props2);
  d.max_allocation = m3.maxMemoryAllocationSize;
  d.max_buffer = api_version >= VK_API_VERSION_1_3 ? m4.maxBufferSize : UINT64_MAX;

  cap("VKAMP_TEST_MAX_BINDING", d.max_storage_range, d);
  cap("VKAMP_TEST_MAX_ALLOCATION", d.max_allocation, d);
  uint64_t budget_cap = UINT64_MAX;
  cap("VKAMP_TEST_MEMORY_BUDGET", budget_cap, d);
  for (DeviceInfo::MemoryHeap& h : d.heaps) h.budget = std::min(h.budget, budget_cap);
}

}  // namespace vkamp
