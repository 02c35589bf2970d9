#include "dashboard.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "panels.hpp"

namespace vkamp::ui {

std::string scale_label(double s) {
  char buf[32];
  double l = std::log2(s);
  if (s > 0 && std::isfinite(l) && l == std::floor(l)) std::snprintf(buf, sizeof buf, "2^%d", int(l));
  else std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

void draw_dashboard(const app::RunHistory& h, DashboardState& state, PlotProbe* probe,
                    const std::function<void()>& controls) {
  if (probe) probe->series.clear();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::Begin("vkamp", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBringToFrontOnFocus);
  ImGui::Text("vkamp  %s", h.title.c_str());
  ImGui::SameLine();
  bool error = h.status.rfind("error", 0) == 0 || h.status.rfind("stopped", 0) == 0;
  ImGui::TextColored(error ? ImVec4(1, 0.4f, 0.4f, 1) : ImVec4(0.6f, 0.9f, 0.6f, 1), "  %s", h.status.c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("  step %zu, %u/%u updates applied, %u overflows", h.records(), h.applied, h.budget,
                      h.overflows);

  if (controls) {
    ImGui::BeginChild("controls", ImVec2(300, 0), true);
    controls();
    ImGui::EndChild();
    ImGui::SameLine();
  }
  ImGui::BeginChild("panels", ImVec2(0, 0), false);
  ImVec2 avail = ImGui::GetContentRegionAvail();
  float gap = ImGui::GetStyle().ItemSpacing.y;
  float row = (avail.y - 2 * gap) / 3, half = (avail.x - ImGui::GetStyle().ItemSpacing.x) / 2;

  ImGui::BeginGroup();
  loss_panel(h, state, probe, ImVec2(half, row));
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginGroup();
  scale_panel(h, probe, ImVec2(half, row));
  ImGui::EndGroup();

  // The underflow panel under the loss scale, on the same step axis; the
  // norm and the step time share the left half.
  const float quarter = (half - ImGui::GetStyle().ItemSpacing.x) / 2;
  ImGui::BeginGroup();
  norm_panel(h, probe, ImVec2(quarter, row));
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginGroup();
  time_panel(h, probe, ImVec2(quarter, row));
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginGroup();
  underflow_panel(h, state, probe, ImVec2(half, row));
  ImGui::EndGroup();

  // A model with BatchNorm gets its running statistics beside the histograms.
  const float bottom = ImGui::GetContentRegionAvail().y;
  if (h.bn_layers.empty()) {
    histogram_panel(h, state, probe, ImVec2(avail.x, bottom));
  } else {
    const float bn_w = std::min(480.0f, avail.x * 0.3f);
    const float hist_w = avail.x - bn_w - ImGui::GetStyle().ItemSpacing.x;
    ImGui::BeginChild("histograms", ImVec2(hist_w, bottom), false);
    histogram_panel(h, state, probe, ImVec2(hist_w, bottom));
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginGroup();
    batch_norm_panel(h, probe, ImVec2(bn_w, bottom));
    ImGui::EndGroup();
  }
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace vkamp::ui

