// The BatchNorm panel: each layer's running statistics.
#include "panels.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <optional>

namespace vkamp::ui {

// BatchNorm's running statistics, one row per layer: the spread of
// running_mean and running_var across its channels at the newest host read
// (RunHistory::bn_layers), and the batches it has folded in. A variance
// near 0 or a mean far from the others is what a diverging fp16 run shows.
void batch_norm_panel(const app::RunHistory& h, PlotProbe* probe, ImVec2 size) {
  char detail[96];
  std::snprintf(detail, sizeof detail, "step %u; min mean max over channels", h.bn_step);
  panel_title("BatchNorm running statistics", detail);
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const float table_h = size.y - ImGui::GetTextLineHeightWithSpacing();
  if (ImGui::BeginTable("batch_norm", 5,
                        ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY,
                        ImVec2(size.x, table_h))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("layer", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("ch");
    ImGui::TableSetupColumn("running_mean");
    ImGui::TableSetupColumn("running_var");
    ImGui::TableSetupColumn("batches");  // num_batches_tracked
    ImGui::TableHeadersRow();
    for (const app::BnLayerStats& l : h.bn_layers) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(tail_that_fits(l.layer, ImGui::GetContentRegionAvail().x).c_str());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", l.layer.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%u", l.channels);
      ImGui::TableNextColumn();
      // Two digits: the spread is what the table is for, and it leaves the names room.
      ImGui::Text("%.2g %.2g %.2g", l.running_mean.min, l.running_mean.mean, l.running_mean.max);
      ImGui::TableNextColumn();
      ImGui::Text("%.2g %.2g %.2g", l.running_var.min, l.running_var.mean, l.running_var.max);
      ImGui::TableNextColumn();
      ImGui::Text("%llu", (unsigned long long)l.batches);
    }
    ImGui::EndTable();
  }
  if (!probe) return;
  // No plot draws here: the probe gets the table's columns, one point per layer.
  for (bool var : {false, true}) {
    SeriesProbe s{"batch_norm", var ? "running_var" : "running_mean", h.bn_layers.size(), INFINITY, -INFINITY,
                  at.x, at.y, at.x + size.x, at.y + table_h};
    for (const app::BnLayerStats& l : h.bn_layers) {
      const app::Spread& v = var ? l.running_var : l.running_mean;
      s.min = std::min(s.min, double(v.min));
      s.max = std::max(s.max, double(v.max));
    }
    probe->series.push_back(s);
  }
}

}  // namespace vkamp::ui
