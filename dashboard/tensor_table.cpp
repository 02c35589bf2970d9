// The histogram panel's per-tensor table: one row per tensor (a click picks
// the plotted one), then their sum. A fine-tune has hundreds of rows (336
// adapters in a 24-layer model), so each row shows its short name
// (tensor_names.hpp; the full name in the tooltip), a filter picks rows by
// either name, and a click on a column's header sorts by it.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "panels.hpp"
#include "tensor_names.hpp"
#include "vkamp/train/underflow.hpp"

namespace vkamp::ui {
namespace {

// A row's figures: the histogram's fractions, and the exact accounting of
// the same step (the subnormals at the scale, the headroom in doublings)
// where there is one.
struct Row {
  size_t index;  // into h.histograms
  std::string name;
  HistogramFractions f;
  std::optional<train::UnderflowShares> exact;
};

void figures(const HistogramFractions& r, const train::UnderflowShares* exact) {
  ImGui::TableNextColumn();
  ImGui::Text("%.1f", 100 * r.zero);
  ImGui::TableNextColumn();
  ImGui::TextColored(r.underflow_unscaled > 0.01 ? ImVec4(1, 0.5f, 0.4f, 1) : ImVec4(0.8f, 0.8f, 0.8f, 1), "%.1f",
                     100 * r.underflow_unscaled);
  ImGui::TableNextColumn();
  ImGui::Text("%.1f", 100 * r.underflow_scaled);
  ImGui::TableNextColumn();
  ImGui::Text("%.1f", 100 * r.overflow_scaled);
  ImGui::TableNextColumn();
  if (exact) ImGui::Text("%.1f", 100 * exact->subnormal);
  ImGui::TableNextColumn();
  if (exact) ImGui::TextUnformatted(exact->headroom ? std::to_string(*exact->headroom).c_str() : "-");
}

// What column `c` sorts by. The name column keeps the model's order (layer
// by layer, as the model lists them); a row without the exact figures
// sorts below every row with them.
double sort_key(const Row& r, int c) {
  switch (c) {
    case 1: return r.f.zero;
    case 2: return r.f.underflow_unscaled;
    case 3: return r.f.underflow_scaled;
    case 4: return r.f.overflow_scaled;
    case 5: return r.exact ? r.exact->subnormal : -1;
    case 6: return r.exact && r.exact->headroom ? *r.exact->headroom : -1;
    default: return double(r.index);
  }
}

void sort_rows(std::vector<Row>& rows, const ImGuiTableSortSpecs* specs) {
  if (!specs || specs->SpecsCount == 0) return;  // the model's order
  std::stable_sort(rows.begin(), rows.end(), [specs](const Row& a, const Row& b) {
    for (int i = 0; i < specs->SpecsCount; ++i) {
      const ImGuiTableColumnSortSpecs& s = specs->Specs[i];
      const double ka = sort_key(a, s.ColumnIndex), kb = sort_key(b, s.ColumnIndex);
      if (ka != kb) return s.SortDirection == ImGuiSortDirection_Ascending ? ka < kb : ka > kb;
    }
    return a.index < b.index;
  });
}

}  // namespace

void tensor_table(const app::RunHistory& h, DashboardState& st, const char* lost_now, float max_height) {
  const Format fmt = band_format(h.precision);
  const train::TensorHistogram& t = h.histograms[size_t(st.histogram_tensor)];
  // The newest per-tensor accounting, when it is the histograms' step.
  const train::TensorUnderflow* latest =
      !h.raw_underflow.empty() && h.raw_underflow.back().step == t.step ? &h.raw_underflow.back() : nullptr;
  std::vector<Row> rows;
  for (size_t i = 0; i < h.histograms.size(); ++i) {
    const std::string& name = h.histograms[i].tensor;
    std::string shown = short_tensor_name(name);
    if (!st.tensor_filter.PassFilter(shown.c_str()) && !st.tensor_filter.PassFilter(name.c_str())) continue;
    Row r{i, std::move(shown), fractions(h.histograms[i], fmt), std::nullopt};
    const int g = gradient_index(h, name);
    if (latest && g >= 0) r.exact = h.gradients.of_tensor(size_t(g), latest->stats[size_t(g)]);
    rows.push_back(std::move(r));
  }
  if (h.histograms.size() > 8) {  // a filter only where there are rows to look for
    st.tensor_filter.Draw("filter##tensors", 200);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("rows whose short or full name holds it: q_proj, lora_B; -mlp leaves out; a,b for either");
    max_height -= ImGui::GetFrameHeightWithSpacing();
  }
  // As tall as its rows, or as the panel leaves (then it scrolls).
  const float row_h = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y;
  const float height = std::min(row_h * float(rows.size() + 2) + 2, max_height);
  // The names as wide as the longest, up to 40% of the panel (a longer one
  // is cut from the left), and frozen: where the figures do not fit beside
  // them, they scroll sideways under the names, which stay.
  float name_w = ImGui::CalcTextSize("tensor").x;
  for (const Row& r : rows) name_w = std::max(name_w, ImGui::CalcTextSize(r.name.c_str()).x);
  name_w = std::min(name_w, 0.4f * ImGui::GetContentRegionAvail().x);
  if (!ImGui::BeginTable("fractions", 7,
                         ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX |
                             ImGuiTableFlags_ScrollY | ImGuiTableFlags_Sortable | ImGuiTableFlags_SortTristate,
                         ImVec2(0, std::max(height, 3 * row_h))))
    return;
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableSetupColumn("tensor", ImGuiTableColumnFlags_WidthFixed, name_w);
  ImGui::TableSetupColumn("zeros", ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableSetupColumn("lost unscaled", ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableSetupColumn(lost_now, ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableSetupColumn("overflow", ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableSetupColumn("subnormal", ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableSetupColumn("headroom");
  ImGui::TableHeadersRow();
  sort_rows(rows, ImGui::TableGetSortSpecs());
  for (const Row& r : rows) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const std::string& name = h.histograms[r.index].tensor;
    const std::string label = tail_that_fits(r.name, ImGui::GetContentRegionAvail().x) + "##" + std::to_string(r.index);
    if (ImGui::Selectable(label.c_str(), int(r.index) == st.histogram_tensor, ImGuiSelectableFlags_SpanAllColumns))
      st.histogram_tensor = int(r.index);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", name.c_str());
    figures(r.f, r.exact ? &*r.exact : nullptr);
  }
  // The sum over every tensor, filtered or not, last whatever the order.
  const train::TensorHistogram all = combined(h.histograms);
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextDisabled("%s", all.tensor.c_str());
  std::optional<train::UnderflowShares> exact_all;
  if (latest) {
    train::TensorStats sum{};
    for (const train::TensorStats& one : latest->stats) {
      sum.subnormal += one.subnormal;
      sum.max_abs_bits = std::max(sum.max_abs_bits, one.max_abs_bits);  // non-negative floats order as their bits
    }
    exact_all = train::underflow_shares(h.gradients.precision, sum, h.gradients.total);
  }
  figures(fractions(all, fmt), exact_all ? &*exact_all : nullptr);
  ImGui::EndTable();
}

}  // namespace vkamp::ui
