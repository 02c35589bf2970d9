// The Vulkan device the dashboard draws with: a graphics queue (that can
// present to `surface` when one is given), a command pool and a descriptor
// pool for ImGui. Training keeps its own Context; the two never share a
// queue, so drawing never waits behind a training step.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vulkan/vulkan.h>

#include "vkamp/instance.hpp"

namespace vkamp::ui {

class GuiDevice {
 public:
  // selector: as --device (empty = the best device). Throws vkamp::Error
  // when the device has no graphics queue (or none that can present).
  GuiDevice(const Instance& instance, const std::string& selector, VkSurfaceKHR surface = VK_NULL_HANDLE);
  ~GuiDevice();
  GuiDevice(const GuiDevice&) = delete;
  GuiDevice& operator=(const GuiDevice&) = delete;

  VkInstance instance() const { return instance_; }
  VkPhysicalDevice physical() const { return physical_; }
  VkDevice device() const { return device_; }
  uint32_t queue_family() const { return family_; }
  VkQueue queue() const { return queue_; }
  VkCommandPool command_pool() const { return pool_; }
  VkDescriptorPool descriptor_pool() const { return descriptors_; }
  const std::string& name() const { return name_; }

  uint32_t memory_type(uint32_t type_bits, VkMemoryPropertyFlags flags) const;
  // Records with `record` into a fresh command buffer, submits, waits.
  void run_now(const std::function<void(VkCommandBuffer)>& record);

 private:
  VkInstance instance_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  uint32_t family_ = UINT32_MAX;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkDescriptorPool descriptors_ = VK_NULL_HANDLE;
  std::string name_;
};

}  // namespace vkamp::ui
