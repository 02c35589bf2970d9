// The app's window: GLFW, a Vulkan surface and swapchain (ImGui's
// ImGui_ImplVulkanH helpers), and ImGui with its GLFW and Vulkan backends.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include <vulkan/vulkan.h>

#include "dashboard/gui_device.hpp"
#include "dashboard/imgui_backend.hpp"
#include "vkamp/instance.hpp"

struct GLFWwindow;
struct ImGui_ImplVulkanH_Window;

namespace vkamp::ui {

class StudioWindow {
 public:
  // Throws vkamp::Error when there is no display or no Vulkan window support.
  StudioWindow(int width, int height, const std::string& device);
  ~StudioWindow();
  StudioWindow(const StudioWindow&) = delete;
  StudioWindow& operator=(const StudioWindow&) = delete;

  bool should_close() const;
  // Polls input (or, with wait_s > 0, waits up to wait_s seconds for it),
  // rebuilds the swapchain after a resize, starts a frame.
  void begin_frame(double wait_s = 0);
  // ImGui::Render() and present.
  void end_frame();
  // The frame just ended, drawn again into an image: RGBA8, top row first.
  std::vector<uint8_t> capture(uint32_t& width, uint32_t& height);
  // A frame of the given size drawn by `draw` into an image (no present):
  // the --report picture, without touching the window.
  std::vector<uint8_t> render_offscreen(uint32_t width, uint32_t height, void (*draw)(void*), void* user);
  const std::string& device_name() const { return dev_->name(); }

 private:
  void rebuild_swapchain();
  void record_and_present();

  GLFWwindow* window_ = nullptr;
  std::unique_ptr<Instance> instance_;
  VkSurfaceKHR surface_ = VK_NULL_HANDLE;
  std::unique_ptr<GuiDevice> dev_;
  std::unique_ptr<ImGui_ImplVulkanH_Window> wd_;
  std::unique_ptr<ImGuiBackend> imgui_;
  bool glfw_backend_ = false;
  bool rebuild_ = false;
  double last_time_ = 0;
};

}  // namespace vkamp::ui
