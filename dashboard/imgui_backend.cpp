#include "imgui_backend.hpp"

#include <imgui.h>
#include <backends/imgui_impl_vulkan.h>

#include "vkamp/error.hpp"

namespace vkamp::ui {
namespace {

void check(VkResult r) {
  if (r != VK_SUCCESS) throw_vk_error(r, "ImGui Vulkan backend", __FILE__, __LINE__);
}

}  // namespace

void apply_style() {
  ImGui::StyleColorsDark();
  ImGuiStyle& s = ImGui::GetStyle();
  s.WindowRounding = 0;
  s.FrameRounding = 3;
  s.ItemSpacing = ImVec2(8, 6);
  s.Colors[ImGuiCol_WindowBg] = ImVec4(0.09f, 0.09f, 0.11f, 1.0f);
}

ImGuiBackend::ImGuiBackend(GuiDevice& dev, VkRenderPass render_pass, uint32_t image_count) : dev_(dev) {
  IMGUI_CHECKVERSION();
  ctx_ = ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is fixed; nothing to remember
  apply_style();
  // The default font, and the same at twice the size for the figures that
  // must stand out (large_font()); a whole multiple keeps its pixels sharp.
  io.Fonts->AddFontDefault();
  ImFontConfig large;
  large.SizePixels = 26;
  io.Fonts->AddFontDefault(&large);

  ImGui_ImplVulkan_InitInfo init{};
  init.Instance = dev.instance();
  init.PhysicalDevice = dev.physical();
  init.Device = dev.device();
  init.QueueFamily = dev.queue_family();
  init.Queue = dev.queue();
  init.DescriptorPool = dev.descriptor_pool();
  init.MinImageCount = image_count < 2 ? 2 : image_count;
  init.ImageCount = init.MinImageCount;
  init.MSAASamples = VK_SAMPLE_COUNT_1_BIT;
  init.CheckVkResultFn = check;
  if (!ImGui_ImplVulkan_Init(&init, render_pass)) {
    ImGui::DestroyContext(ctx_);
    throw Error("ImGui's Vulkan renderer did not initialise");
  }
  dev.run_now([](VkCommandBuffer cmd) { ImGui_ImplVulkan_CreateFontsTexture(cmd); });
  ImGui_ImplVulkan_DestroyFontUploadObjects();
}

ImGuiBackend::~ImGuiBackend() {
  vkDeviceWaitIdle(dev_.device());
  ImGui_ImplVulkan_Shutdown();
  ImGui::DestroyContext(ctx_);
}

void ImGuiBackend::new_frame(float width, float height, float dt_seconds) {
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = ImVec2(width, height);
  io.DeltaTime = dt_seconds > 0 ? dt_seconds : 1.0f / 60;
  new_frame();
}

void ImGuiBackend::new_frame() {
  ImGui_ImplVulkan_NewFrame();
  ImGui::NewFrame();
}

void ImGuiBackend::render() { ImGui::Render(); }

void ImGuiBackend::record(VkCommandBuffer cmd) { ImGui_ImplVulkan_RenderDrawData(ImGui::GetDrawData(), cmd); }

}  // namespace vkamp::ui
