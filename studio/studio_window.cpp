#include "studio_window.hpp"

#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_vulkan.h>
#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>

#include "dashboard/offscreen_target.hpp"
#include "vkamp/error.hpp"

namespace vkamp::ui {
namespace {

constexpr uint32_t kMinImages = 2;

std::string glfw_error() {
  const char* what = nullptr;
  glfwGetError(&what);
  return what ? what : "unknown GLFW error";
}

}  // namespace

StudioWindow::StudioWindow(int width, int height, const std::string& device) {
  if (!glfwInit())
    throw Error("cannot open a window (" + glfw_error() +
                "). Without a display, run the app under xvfb-run, or get the dashboard as a picture "
                "from a sample with --report FILE.png");
  if (!glfwVulkanSupported()) {
    glfwTerminate();
    throw Error("GLFW finds no Vulkan loader that can draw into a window");
  }
  uint32_t n = 0;
  const char** exts = glfwGetRequiredInstanceExtensions(&n);
  instance_ = std::make_unique<Instance>(validation_requested_by_env(), std::vector<const char*>(exts, exts + n));

  glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
  window_ = glfwCreateWindow(width, height, "vkamp studio", nullptr, nullptr);
  if (!window_) {
    instance_.reset();
    glfwTerminate();
    throw Error("cannot create the window: " + glfw_error());
  }
  VKAMP_VK(glfwCreateWindowSurface(instance_->handle(), window_, nullptr, &surface_));
  dev_ = std::make_unique<GuiDevice>(*instance_, device, surface_);

  wd_ = std::make_unique<ImGui_ImplVulkanH_Window>();
  wd_->Surface = surface_;
  // UNORM: ImGui's colours are meant to be written as they are.
  const VkFormat formats[] = {VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_R8G8B8A8_UNORM};
  wd_->SurfaceFormat = ImGui_ImplVulkanH_SelectSurfaceFormat(dev_->physical(), surface_, formats, 2,
                                                             VK_COLORSPACE_SRGB_NONLINEAR_KHR);
  const VkPresentModeKHR modes[] = {VK_PRESENT_MODE_FIFO_KHR};
  wd_->PresentMode = ImGui_ImplVulkanH_SelectPresentMode(dev_->physical(), surface_, modes, 1);
  wd_->ClearValue.color = {{0.09f, 0.09f, 0.11f, 1.0f}};
  int fw = 0, fh = 0;
  glfwGetFramebufferSize(window_, &fw, &fh);
  ImGui_ImplVulkanH_CreateOrResizeWindow(instance_->handle(), dev_->physical(), dev_->device(), wd_.get(),
                                         dev_->queue_family(), nullptr, fw, fh, kMinImages);

  imgui_ = std::make_unique<ImGuiBackend>(*dev_, wd_->RenderPass, kMinImages);
  glfw_backend_ = ImGui_ImplGlfw_InitForVulkan(window_, true);
  if (!glfw_backend_) throw Error("ImGui's GLFW backend did not initialise");
  last_time_ = glfwGetTime();
}

StudioWindow::~StudioWindow() {
  if (dev_) vkDeviceWaitIdle(dev_->device());
  if (glfw_backend_) ImGui_ImplGlfw_Shutdown();
  imgui_.reset();
  if (wd_ && wd_->Swapchain) {
    ImGui_ImplVulkanH_DestroyWindow(instance_->handle(), dev_->device(), wd_.get(), nullptr);
    surface_ = VK_NULL_HANDLE;  // DestroyWindow destroyed it too
  }
  dev_.reset();
  if (surface_) vkDestroySurfaceKHR(instance_->handle(), surface_, nullptr);
  if (window_) glfwDestroyWindow(window_);
  instance_.reset();
  glfwTerminate();
}

bool StudioWindow::should_close() const { return glfwWindowShouldClose(window_); }

void StudioWindow::rebuild_swapchain() {
  int fw = 0, fh = 0;
  glfwGetFramebufferSize(window_, &fw, &fh);
  if (fw <= 0 || fh <= 0) return;  // minimised: keep the old one
  ImGui_ImplVulkan_SetMinImageCount(kMinImages);
  ImGui_ImplVulkanH_CreateOrResizeWindow(instance_->handle(), dev_->physical(), dev_->device(), wd_.get(),
                                         dev_->queue_family(), nullptr, fw, fh, kMinImages);
  wd_->FrameIndex = 0;
  rebuild_ = false;
}

void StudioWindow::begin_frame(double wait_s) {
  if (wait_s > 0)
    glfwWaitEventsTimeout(wait_s);  // returns at the first input event
  else
    glfwPollEvents();
  if (rebuild_) rebuild_swapchain();
  ImGui_ImplGlfw_NewFrame();
  imgui_->new_frame();
}

void StudioWindow::end_frame() {
  imgui_->render();
  ImDrawData* dd = ImGui::GetDrawData();
  if (dd->DisplaySize.x <= 0 || dd->DisplaySize.y <= 0) return;
  record_and_present();
}

void StudioWindow::record_and_present() {
  VkDevice d = dev_->device();
  ImGui_ImplVulkanH_Window* wd = wd_.get();
  VkSemaphore acquired = wd->FrameSemaphores[wd->SemaphoreIndex].ImageAcquiredSemaphore;
  VkSemaphore rendered = wd->FrameSemaphores[wd->SemaphoreIndex].RenderCompleteSemaphore;
  VkResult r = vkAcquireNextImageKHR(d, wd->Swapchain, UINT64_MAX, acquired, VK_NULL_HANDLE, &wd->FrameIndex);
  if (r == VK_ERROR_OUT_OF_DATE_KHR || r == VK_SUBOPTIMAL_KHR) {
    rebuild_ = true;
    if (r == VK_ERROR_OUT_OF_DATE_KHR) return;
  } else {
    VKAMP_VK(r);
  }
  ImGui_ImplVulkanH_Frame* fd = &wd->Frames[wd->FrameIndex];
  VKAMP_VK(vkWaitForFences(d, 1, &fd->Fence, VK_TRUE, UINT64_MAX));
  VKAMP_VK(vkResetFences(d, 1, &fd->Fence));
  VKAMP_VK(vkResetCommandPool(d, fd->CommandPool, 0));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VKAMP_VK(vkBeginCommandBuffer(fd->CommandBuffer, &bi));
  VkRenderPassBeginInfo rb{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
  rb.renderPass = wd->RenderPass;
  rb.framebuffer = fd->Framebuffer;
  rb.renderArea.extent = {uint32_t(wd->Width), uint32_t(wd->Height)};
  rb.clearValueCount = 1;
  rb.pClearValues = &wd->ClearValue;
  vkCmdBeginRenderPass(fd->CommandBuffer, &rb, VK_SUBPASS_CONTENTS_INLINE);
  imgui_->record(fd->CommandBuffer);
  vkCmdEndRenderPass(fd->CommandBuffer);
  VKAMP_VK(vkEndCommandBuffer(fd->CommandBuffer));

  VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.waitSemaphoreCount = 1;
  si.pWaitSemaphores = &acquired;
  si.pWaitDstStageMask = &wait_stage;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &fd->CommandBuffer;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &rendered;
  VKAMP_VK(vkQueueSubmit(dev_->queue(), 1, &si, fd->Fence));

  VkPresentInfoKHR pi{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
  pi.waitSemaphoreCount = 1;
  pi.pWaitSemaphores = &rendered;
  pi.swapchainCount = 1;
  pi.pSwapchains = &wd->Swapchain;
  pi.pImageIndices = &wd->FrameIndex;
  r = vkQueuePresentKHR(dev_->queue(), &pi);
  if (r == VK_ERROR_OUT_OF_DATE_KHR || r == VK_SUBOPTIMAL_KHR) rebuild_ = true;
  else VKAMP_VK(r);
  wd->SemaphoreIndex = (wd->SemaphoreIndex + 1) % wd->ImageCount;
}

std::vector<uint8_t> StudioWindow::capture(uint32_t& width, uint32_t& height) {
  ImDrawData* dd = ImGui::GetDrawData();
  width = uint32_t(dd->DisplaySize.x * dd->FramebufferScale.x);
  height = uint32_t(dd->DisplaySize.y * dd->FramebufferScale.y);
  vkDeviceWaitIdle(dev_->device());  // ImGui's vertex buffers are reused per frame
  // Same format as the swapchain, so the render pass is compatible with the
  // one ImGui's pipeline was built for.
  OffscreenTarget target(*dev_, width, height, wd_->SurfaceFormat.format);
  return target.render([&](VkCommandBuffer cmd) { imgui_->record(cmd); });
}

std::vector<uint8_t> StudioWindow::render_offscreen(uint32_t width, uint32_t height, void (*draw)(void*),
                                                    void* user) {
  vkDeviceWaitIdle(dev_->device());
  // ImGui sizes tables and groups from the previous frame: settle first.
  for (int frame = 0; frame < 3; ++frame) {
    imgui_->new_frame(float(width), float(height), 1.0f / 60);
    draw(user);
    imgui_->render();
  }
  OffscreenTarget target(*dev_, width, height, wd_->SurfaceFormat.format);
  return target.render([&](VkCommandBuffer cmd) { imgui_->record(cmd); });
}

}  // namespace vkamp::ui
