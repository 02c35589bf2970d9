// The gradient-norm panel.
#include "panels.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <optional>

namespace vkamp::ui {

void norm_panel(const app::RunHistory& h, PlotProbe* probe, ImVec2 size) {
  char detail[64] = "";
  if (!h.grad_norm.empty()) std::snprintf(detail, sizeof detail, "last %.4g (unscaled)", h.grad_norm.back());
  panel_title("Gradient norm (log2)", detail);
  Axis y = fit_axis(h.grad_norm, true, -10, 4);
  PlotArea p("grad_norm", ImVec2(size.x, size.y - ImGui::GetTextLineHeightWithSpacing()), step_axis(h), y, probe);
  p.line("grad_norm", h.step, h.grad_norm, kNorm, 1.5f);
}

}  // namespace vkamp::ui
