// The step-time panel.
#include "panels.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <optional>

namespace vkamp::ui {

void time_panel(const app::RunHistory& h, PlotProbe* probe, ImVec2 size) {
  // Throughput from the mean GPU time of the last 50 timed steps.
  double ms = 0;
  int timed = 0;
  for (size_t i = h.step_ms.size(); i-- > 0 && timed < 50;)
    if (h.step_ms[i] > 0) {
      ms += h.step_ms[i];
      ++timed;
    }
  char detail[128] = "";
  if (timed)
    std::snprintf(detail, sizeof detail, "%.2f ms/step, %.0f samples/s (GPU time)", ms / timed,
                  h.samples_per_step * 1000.0 * timed / ms);
  panel_title("Step time", detail);
  std::vector<float> nonzero = h.step_ms;
  for (float& v : nonzero)
    if (v <= 0) v = NAN;
  Axis y = fit_axis(nonzero, false, 0, 1, nonzero.size() > 20 ? 5 : 0);
  y.lo = 0;
  PlotArea p("step_time", ImVec2(size.x, size.y - ImGui::GetTextLineHeightWithSpacing()), step_axis(h), y, probe);
  p.line("step_ms", h.step, nonzero, kTime, 1.5f);
}

}  // namespace vkamp::ui
