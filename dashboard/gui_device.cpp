#include "gui_device.hpp"

#include <vector>

#include "vkamp/device_info.hpp"
#include "vkamp/error.hpp"
#include "vkamp/one_shot.hpp"

namespace vkamp::ui {

GuiDevice::GuiDevice(const Instance& instance, const std::string& selector, VkSurfaceKHR surface)
    : instance_(instance.handle()) {
  auto devices = probe_devices(instance);
  const DeviceInfo& info = devices.at(select_device(devices, selector));
  physical_ = info.handle;
  name_ = info.name;

  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &n, families.data());
  for (uint32_t i = 0; i < n && family_ == UINT32_MAX; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) continue;
    VkBool32 present = VK_TRUE;
    if (surface) VKAMP_VK(vkGetPhysicalDeviceSurfaceSupportKHR(physical_, i, surface, &present));
    if (present) family_ = i;
  }
  if (family_ == UINT32_MAX)
    throw Error("device " + name_ + " has no graphics queue" + (surface ? " that can present to the window" : "") +
                ": the dashboard cannot draw on it");

  float priority = 1.0f;
  VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  q.queueFamilyIndex = family_;
  q.queueCount = 1;
  q.pQueuePriorities = &priority;
  const char* swapchain = VK_KHR_SWAPCHAIN_EXTENSION_NAME;
  VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &q;
  ci.enabledExtensionCount = surface ? 1 : 0;
  ci.ppEnabledExtensionNames = &swapchain;
  VKAMP_VK(vkCreateDevice(physical_, &ci, nullptr, &device_));
  vkGetDeviceQueue(device_, family_, 0, &queue_);

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = family_;
  VKAMP_VK(vkCreateCommandPool(device_, &pci, nullptr, &pool_));

  // ImGui needs one combined image sampler (the font atlas); a few spare.
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 8};
  VkDescriptorPoolCreateInfo dci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dci.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
  dci.maxSets = 8;
  dci.poolSizeCount = 1;
  dci.pPoolSizes = &size;
  VKAMP_VK(vkCreateDescriptorPool(device_, &dci, nullptr, &descriptors_));
}

GuiDevice::~GuiDevice() {
  if (!device_) return;
  vkDeviceWaitIdle(device_);
  vkDestroyDescriptorPool(device_, descriptors_, nullptr);
  vkDestroyCommandPool(device_, pool_, nullptr);
  vkDestroyDevice(device_, nullptr);
}

uint32_t GuiDevice::memory_type(uint32_t type_bits, VkMemoryPropertyFlags flags) const {
  VkPhysicalDeviceMemoryProperties props;
  vkGetPhysicalDeviceMemoryProperties(physical_, &props);
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i)
    if ((type_bits & (1u << i)) && (props.memoryTypes[i].propertyFlags & flags) == flags) return i;
  throw Error("no memory type with the flags the dashboard needs");
}

void GuiDevice::run_now(const std::function<void(VkCommandBuffer)>& record) {
  run_one_shot(device_, queue_, pool_, record);
}

}  // namespace vkamp::ui
