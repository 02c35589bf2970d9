// The loss-scale panel: the scale per step, its skipped steps and growths.
#include "panels.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <optional>

namespace vkamp::ui {

void scale_panel(const app::RunHistory& h, PlotProbe* probe, ImVec2 size) {
  size_t n = h.records();
  uint32_t skipped = uint32_t(h.skipped_steps.size());
  char detail[160];
  std::snprintf(detail, sizeof detail, "now %s; skipped %u of %zu steps (%.2f%%); %u backoffs, %u growths",
                n ? scale_label(h.loss_scale.back()).c_str() : "-", skipped, n, n ? 100.0 * skipped / n : 0.0,
                h.backoffs(), h.growths());
  panel_title("Loss scale (log2)", detail);
  Axis y = fit_axis(h.loss_scale, true, 0, 16);
  PlotArea p("loss_scale", ImVec2(size.x, size.y - ImGui::GetTextLineHeightWithSpacing()), step_axis(h), y, probe);
  std::vector<float> growth;
  for (auto& e : h.events)
    if (e.kind == app::ScaleChange::Growth) growth.push_back(float(e.step));
  p.markers("growths", growth, kGrowth, 0.06f);
  std::vector<float> skips(h.skipped_steps.begin(), h.skipped_steps.end());
  p.markers("skipped steps", skips, kSkipped, 0.15f);
  p.line("scale", h.step, h.loss_scale, kScale, 2.0f);
}

}  // namespace vkamp::ui
