// The loss panel: the raw and smoothed loss, and the evaluations.
#include "panels.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <optional>

namespace vkamp::ui {

void loss_panel(const app::RunHistory& h, DashboardState& st, PlotProbe* probe, ImVec2 size) {
  char detail[96] = "";
  if (!h.loss_smooth.empty())
    std::snprintf(detail, sizeof detail, "smoothed %.4g, last %.4g", h.loss_smooth.back(), h.loss.back());
  panel_title("Loss", detail);
  float eval_h = h.evals.empty() ? 0 : size.y * 0.3f;
  // Skip the first steps when fitting: the initial loss would flatten the rest.
  size_t from = h.loss.size() > 50 ? h.loss.size() / 20 : 0;
  Axis y = fit_axis(h.loss_smooth, false, 0, 1, from);
  if (st.show_raw_loss) {
    Axis raw = fit_axis(h.loss, false, 0, 1, from);
    y.lo = std::max(std::min(y.lo, raw.lo), 0.0);
    y.hi = std::max(y.hi, std::min(raw.hi, y.hi + 2 * (y.hi - y.lo)));
  }
  PlotArea p("loss", ImVec2(size.x, size.y - eval_h - ImGui::GetTextLineHeightWithSpacing()), step_axis(h), y,
             probe);
  if (st.show_raw_loss) p.line("raw", h.step, h.loss, kLossRaw, 1.0f);
  p.line("smoothed", h.step, h.loss_smooth, kLossSmooth, 2.0f);
  if (!h.evals.empty()) {
    // Accuracy in percent; a loss (a language model's validation loss) as is.
    const bool percent = h.evals.back().metric == "accuracy";
    std::vector<float> xs, ys;
    for (auto& e : h.evals) {
      xs.push_back(float(e.step));
      ys.push_back(float(percent ? e.accuracy * 100 : e.accuracy));
    }
    Axis acc = fit_axis(ys, false, 0, percent ? 100 : 1);
    PlotArea a("eval", ImVec2(size.x, eval_h), step_axis(h), acc, probe);
    const std::string name = app::eval_label(h);
    a.line(name.c_str(), xs, ys, kAccuracy, 2.0f);
    char label[64];
    const char* format = percent ? "%s %.2f%%" : h.evals.back().metric == "mse" ? "%s %.4g" : "%s %.4f";
    std::snprintf(label, sizeof label, format, name.c_str(), ys.back());
    ImGui::GetWindowDrawList()->AddText(ImVec2(a.at(0, acc.hi).x + 6, a.at(0, acc.hi).y + 2), kAccuracy, label);
  }
}

}  // namespace vkamp::ui
