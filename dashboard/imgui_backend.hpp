// An ImGui context bound to ImGui's Vulkan renderer for one render pass,
// with the font atlas uploaded. One per process at a time (ImGui's Vulkan
// backend keeps global state).
#pragma once
#include <cstdint>
#include <vulkan/vulkan.h>

#include "gui_device.hpp"

struct ImGuiContext;

namespace vkamp::ui {

class ImGuiBackend {
 public:
  ImGuiBackend(GuiDevice& dev, VkRenderPass render_pass, uint32_t image_count);
  ~ImGuiBackend();
  ImGuiBackend(const ImGuiBackend&) = delete;
  ImGuiBackend& operator=(const ImGuiBackend&) = delete;

  // Starts a frame of the given size when no platform backend sets it.
  void new_frame(float width, float height, float dt_seconds);
  // Starts a frame whose size and input a platform backend (GLFW) set.
  void new_frame();
  // Ends the frame: ImGui::Render().
  void render();
  // Records the last rendered frame inside a begun render pass.
  void record(VkCommandBuffer cmd);

 private:
  GuiDevice& dev_;
  ImGuiContext* ctx_ = nullptr;
};

// vkamp's look: ImGui's dark style, a little more spacing for plots.
void apply_style();

}  // namespace vkamp::ui
