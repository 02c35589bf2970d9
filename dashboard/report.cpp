#include "report.hpp"

#include <imgui.h>

#include "dashboard.hpp"
#include "gui_device.hpp"
#include "imgui_backend.hpp"
#include "offscreen_target.hpp"
#include "vkamp/instance.hpp"

namespace vkamp::ui {

PlotProbe render_report(const app::RunHistory& h, const ReportOptions& opt) {
  Instance instance(validation_requested_by_env());
  GuiDevice dev(instance, opt.device);
  OffscreenTarget target(dev, opt.width, opt.height);
  ImGuiBackend imgui(dev, target.render_pass(), 2);
  DashboardState state;
  PlotProbe probe;
  // ImGui sizes tables and groups from the previous frame: draw a few
  // frames and keep the last, as a window would show it after a moment.
  for (int frame = 0; frame < 3; ++frame) {
    imgui.new_frame(float(opt.width), float(opt.height), 1.0f / 60);
    draw_dashboard(h, state, &probe);
    imgui.render();
  }
  auto pixels = target.render([&](VkCommandBuffer cmd) { imgui.record(cmd); });
  write_png(opt.path, opt.width, opt.height, pixels);
  return probe;
}

}  // namespace vkamp::ui
