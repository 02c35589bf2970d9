// A color image to draw the dashboard into without a window: its own render
// pass (compatible with a swapchain pass of the same format), a framebuffer
// and a read-back of the pixels as RGBA8.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>
#include <vulkan/vulkan.h>

#include "gui_device.hpp"

namespace vkamp::ui {

class OffscreenTarget {
 public:
  // format: R8G8B8A8_UNORM or B8G8R8A8_UNORM.
  OffscreenTarget(GuiDevice& dev, uint32_t width, uint32_t height, VkFormat format = VK_FORMAT_R8G8B8A8_UNORM);
  ~OffscreenTarget();
  OffscreenTarget(const OffscreenTarget&) = delete;
  OffscreenTarget& operator=(const OffscreenTarget&) = delete;

  VkRenderPass render_pass() const { return pass_; }
  uint32_t width() const { return width_; }
  uint32_t height() const { return height_; }

  // Clears, runs `draw` inside the render pass, copies the image out and
  // returns width x height RGBA8 pixels, top row first.
  std::vector<uint8_t> render(const std::function<void(VkCommandBuffer)>& draw);

 private:
  GuiDevice& dev_;
  uint32_t width_, height_;
  VkFormat format_;
  VkImage image_ = VK_NULL_HANDLE;
  VkDeviceMemory image_memory_ = VK_NULL_HANDLE;
  VkImageView view_ = VK_NULL_HANDLE;
  VkRenderPass pass_ = VK_NULL_HANDLE;
  VkFramebuffer framebuffer_ = VK_NULL_HANDLE;
  VkBuffer readback_ = VK_NULL_HANDLE;
  VkDeviceMemory readback_memory_ = VK_NULL_HANDLE;
};

// Writes RGBA8 pixels as a PNG; throws vkamp::Error when it cannot.
void write_png(const std::string& path, uint32_t width, uint32_t height, const std::vector<uint8_t>& rgba);

}  // namespace vkamp::ui
