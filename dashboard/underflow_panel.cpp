// The underflow panel: what the loss scale saves, step by step.
#include "panels.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <optional>

namespace vkamp::ui {
namespace {

// The tensor picked in the histogram table, when the run has its underflow
// series: its index in h.tensor_underflow, or -1.
int picked_tensor(const app::RunHistory& h, const DashboardState& st) {
  if (h.histograms.empty()) return -1;
  const int shown = std::clamp(st.histogram_tensor, 0, int(h.histograms.size()) - 1);
  const int i = gradient_index(h, h.histograms[shown].tensor);
  return i >= 0 && size_t(i) < h.tensor_underflow.size() && !h.tensor_underflow[i].step.empty() ? i : -1;
}

std::string headroom_text(float doublings) {
  if (!std::isfinite(doublings)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d", int(doublings));
  return buf;
}

}  // namespace

// The underflow accounting of every step, under the loss scale on the same
// step axis: the % of the gradient elements the scale saves (they would
// flush to 0 unscaled) and of those subnormal at the scale; below, how many
// doublings of the scale remain before the largest gradient overflows. The
// tensor picked in the histogram table is drawn thin, at its histogram steps.
void underflow_panel(const app::RunHistory& h, const DashboardState& st, PlotProbe* probe, ImVec2 size) {
  const app::UnderflowSeries& u = h.underflow;
  const int picked = picked_tensor(h, st);
  const app::UnderflowSeries* t = picked >= 0 ? &h.tensor_underflow[picked] : nullptr;
  char detail[256];
  if (u.step.empty())
    std::snprintf(detail, sizeof detail, "%s",
                  h.gradients.empty() ? "not recorded in this run" : "waiting for the first step");
  else
    std::snprintf(detail, sizeof detail, "last step: lost unscaled %.2f%%, subnormal %.2f%%, headroom %s",
                  u.lost_unscaled.back(), u.subnormal.back(), headroom_text(u.headroom.back()).c_str());
  panel_title("Underflow % and headroom", detail);
  const float plot_h = size.y - ImGui::GetTextLineHeightWithSpacing() - ImGui::GetStyle().ItemSpacing.y;
  std::vector<float> shares = u.lost_unscaled;
  shares.insert(shares.end(), u.subnormal.begin(), u.subnormal.end());
  if (t) {
    shares.insert(shares.end(), t->lost_unscaled.begin(), t->lost_unscaled.end());
    shares.insert(shares.end(), t->subnormal.begin(), t->subnormal.end());
  }
  Axis y = fit_axis(shares, false, 0, 1);
  y.lo = 0;
  y.hi = std::max(y.hi, 0.1);
  y.unit = "%";
  PlotArea p("underflow", ImVec2(size.x, plot_h * 0.58f), step_axis(h), y, probe);
  const std::string name = t ? h.gradients.tensors[picked] : "";
  if (t) {
    p.line((name + " lost unscaled").c_str(), t->step, t->lost_unscaled, kLostUnscaled, 1.0f);
    p.line((name + " subnormal").c_str(), t->step, t->subnormal, kSubnormalLine, 1.0f);
  }
  p.line("lost unscaled", u.step, u.lost_unscaled, kLostUnscaled, 2.0f);
  p.line("subnormal", u.step, u.subnormal, kSubnormalLine, 2.0f);
  const double x0 = step_axis(h).lo;
  p.text_at(x0, 0, "% of the gradient elements", kLabelText, 0);
  p.text_at(x0, 1, "lost unscaled: would flush to 0 without the scale", kLostUnscaled, 0);
  p.text_at(x0, 2, "subnormal at the scale", kSubnormalLine, 0);
  if (t) p.text_at(x0, 3, ("thin: " + name).c_str(), kLabelText, 0);
  Axis hy = fit_axis(t ? [&] {
    std::vector<float> all = u.headroom;
    all.insert(all.end(), t->headroom.begin(), t->headroom.end());
    return all;
  }() : u.headroom, false, 0, 16);
  hy.lo = std::min(std::floor(hy.lo), 0.0);
  hy.hi = std::max(std::ceil(hy.hi), hy.lo + 4);
  PlotArea q("headroom", ImVec2(size.x, plot_h * 0.42f), step_axis(h), hy, probe);
  if (t) q.line((name + " headroom").c_str(), t->step, t->headroom, kHeadroom, 1.0f);
  q.line("headroom", u.step, u.headroom, kHeadroom, 2.0f);
  q.text_at(x0, 0, "headroom: doublings of the scale before the largest gradient overflows", kHeadroom, 0);
}

}  // namespace vkamp::ui
