#include "dashboard.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "vkamp/train/gpu_state.hpp"

namespace vkamp::ui {
namespace {

using train::kHistBins;
using train::kHistInf;
using train::kHistLogBins;
using train::kHistMinExp;
using train::kHistNan;
using train::kHistZero;

constexpr ImU32 kLossRaw = IM_COL32(100, 150, 220, 110);
constexpr ImU32 kLossSmooth = IM_COL32(120, 190, 255, 255);
constexpr ImU32 kAccuracy = IM_COL32(120, 220, 140, 255);
constexpr ImU32 kScale = IM_COL32(250, 200, 80, 255);
constexpr ImU32 kSkipped = IM_COL32(240, 70, 70, 255);
constexpr ImU32 kGrowth = IM_COL32(110, 210, 120, 255);
constexpr ImU32 kNorm = IM_COL32(200, 140, 240, 255);
constexpr ImU32 kTime = IM_COL32(120, 210, 210, 255);
constexpr ImU32 kBars = IM_COL32(210, 210, 230, 255);
// fp16 ranges, shaded behind the histogram.
constexpr ImU32 kUnderflowBand = IM_COL32(200, 60, 60, 70);
constexpr ImU32 kSubnormalBand = IM_COL32(230, 160, 40, 70);
constexpr ImU32 kNormalBand = IM_COL32(60, 170, 90, 60);
constexpr ImU32 kOverflowBand = IM_COL32(200, 60, 60, 90);

constexpr double kFp16MinSubnormalLog2 = -24, kFp16MinNormalLog2 = -14;
const double kFp16MaxLog2 = std::log2(65504.0);

void panel_title(const char* title, const char* detail = nullptr) {
  ImGui::TextUnformatted(title);
  if (detail) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", detail);
  }
}

Axis step_axis(const RunHistory& h) {
  double last = h.step.empty() ? 1 : h.step.back() + 1;
  return {0, std::max(last, 10.0), false};
}

void loss_panel(const RunHistory& h, DashboardState& st, PlotProbe* probe, ImVec2 size) {
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
    const std::string name = eval_label(h);
    a.line(name.c_str(), xs, ys, kAccuracy, 2.0f);
    char label[64];
    const char* format = percent ? "%s %.2f%%" : h.evals.back().metric == "mse" ? "%s %.4g" : "%s %.4f";
    std::snprintf(label, sizeof label, format, name.c_str(), ys.back());
    ImGui::GetWindowDrawList()->AddText(ImVec2(a.at(0, acc.hi).x + 6, a.at(0, acc.hi).y + 2), kAccuracy, label);
  }
}

void scale_panel(const RunHistory& h, PlotProbe* probe, ImVec2 size) {
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
    if (e.kind == ScaleChange::Growth) growth.push_back(float(e.step));
  p.markers("growths", growth, kGrowth, 0.06f);
  std::vector<float> skips(h.skipped_steps.begin(), h.skipped_steps.end());
  p.markers("skipped steps", skips, kSkipped, 0.15f);
  p.line("scale", h.step, h.loss_scale, kScale, 2.0f);
}

void norm_panel(const RunHistory& h, PlotProbe* probe, ImVec2 size) {
  char detail[64] = "";
  if (!h.grad_norm.empty()) std::snprintf(detail, sizeof detail, "last %.4g (unscaled)", h.grad_norm.back());
  panel_title("Gradient norm (log2)", detail);
  Axis y = fit_axis(h.grad_norm, true, -10, 4);
  PlotArea p("grad_norm", ImVec2(size.x, size.y - ImGui::GetTextLineHeightWithSpacing()), step_axis(h), y, probe);
  p.line("grad_norm", h.step, h.grad_norm, kNorm, 1.5f);
}

void time_panel(const RunHistory& h, PlotProbe* probe, ImVec2 size) {
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

void histogram_panel(const RunHistory& h, DashboardState& st, PlotProbe* probe, ImVec2 size) {
  if (h.histograms.empty()) {
    panel_title("Gradient histograms", h.histogram_interval ? "waiting for the first histogram step"
                                                            : "off in this run (histogram_interval 0)");
    PlotArea p("histogram", ImVec2(size.x, size.y - ImGui::GetTextLineHeightWithSpacing()),
               {double(kHistMinExp) - 3, double(kHistMinExp + kHistLogBins) + 3}, {0, 1}, probe);
    return;
  }
  st.histogram_tensor = std::clamp(st.histogram_tensor, 0, int(h.histograms.size()) - 1);
  const train::TensorHistogram& t = h.histograms[st.histogram_tensor];
  double ls = std::log2(std::max(t.loss_scale, 1e-38f));
  char detail[128];
  std::snprintf(detail, sizeof detail, "%s at step %u, unscaled |g| on log2 bins, fp16 ranges at scale %s",
                t.tensor.c_str(), t.step, scale_label(t.loss_scale).c_str());
  panel_title("Gradient histogram", detail);

  float table_w = std::min(440.0f, size.x * 0.42f);
  float plot_h = size.y - ImGui::GetTextLineHeightWithSpacing();
  ImGui::BeginGroup();
  // x: log2 |g| (unscaled); zero sits left of the log bins, inf and NaN right.
  const double x_zero = kHistMinExp - 2, x_inf = kHistMinExp + kHistLogBins + 1.5, x_nan = x_inf + 2.5;
  double total = 0;
  for (uint32_t c : t.bins) total += c;
  std::vector<float> xs, pct;
  for (int b = 0; b < kHistBins; ++b) {
    double x = b < kHistLogBins ? kHistMinExp + b + 0.5 : b == kHistZero ? x_zero : b == kHistInf ? x_inf : x_nan;
    xs.push_back(float(x));
    pct.push_back(total > 0 ? float(100.0 * t.bins[b] / total) : 0.0f);
  }
  float top = *std::max_element(pct.begin(), pct.end());
  PlotArea p("histogram", ImVec2(size.x - table_w - 8, plot_h), {x_zero - 1.5, x_nan + 1.5},
             {0, std::max(1.0, top * 1.15)}, probe);
  // Where each unscaled magnitude lands in fp16 once multiplied by the scale.
  double lo = kHistMinExp, hi = kHistMinExp + kHistLogBins;
  p.x_band(lo, kFp16MinSubnormalLog2 - ls, kUnderflowBand, "flushed to 0");
  p.x_band(std::max(lo, kFp16MinSubnormalLog2 - ls), kFp16MinNormalLog2 - ls, kSubnormalBand, "subnormal");
  p.x_band(std::max(lo, kFp16MinNormalLog2 - ls), std::min(hi, kFp16MaxLog2 - ls), kNormalBand, "fp16 normal");
  p.x_band(kFp16MaxLog2 - ls, hi, kOverflowBand, "overflow");
  p.vertical_line(kFp16MinSubnormalLog2, IM_COL32(255, 255, 255, 140), "unscaled fp16 limit");
  p.bars("bins", xs, pct, 0.9f, kBars);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (auto [x, label] : {std::pair{x_zero, "0"}, std::pair{x_inf, "inf"}, std::pair{x_nan, "NaN"}}) {
    ImVec2 a = p.at(x, 0);
    dl->AddText(ImVec2(a.x - 8, a.y - 16), IM_COL32(230, 230, 230, 255), label);
  }
  ImGui::EndGroup();

  ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::TextDisabled("per tensor, %% of gradients:");
  if (ImGui::BeginTable("fractions", 5, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("tensor");
    ImGui::TableSetupColumn("zero");
    ImGui::TableSetupColumn("lost unscaled");
    ImGui::TableSetupColumn("lost scaled");
    ImGui::TableSetupColumn("overflow");
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < h.histograms.size(); ++i) {
      HistogramFractions f = fractions(h.histograms[i]);
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      if (ImGui::Selectable(h.histograms[i].tensor.c_str(), int(i) == st.histogram_tensor,
                            ImGuiSelectableFlags_SpanAllColumns))
        st.histogram_tensor = int(i);
      ImGui::TableNextColumn();
      ImGui::Text("%.1f", 100 * f.zero);
      ImGui::TableNextColumn();
      ImGui::TextColored(f.underflow_unscaled > 0.01 ? ImVec4(1, 0.5f, 0.4f, 1) : ImVec4(0.8f, 0.8f, 0.8f, 1),
                         "%.1f", 100 * f.underflow_unscaled);
      ImGui::TableNextColumn();
      ImGui::Text("%.1f", 100 * f.underflow_scaled);
      ImGui::TableNextColumn();
      ImGui::Text("%.1f", 100 * f.overflow_scaled);
    }
    ImGui::EndTable();
  }
  ImGui::TextWrapped("lost unscaled: 0 < |g| < 2^-24, below fp16's smallest subnormal without loss scaling. "
                     "lost scaled: the same at the current scale. In fp16 runs a value that did underflow "
                     "is already counted as zero.");
  ImGui::EndGroup();
}

}  // namespace

std::string scale_label(double s) {
  char buf[32];
  double l = std::log2(s);
  if (s > 0 && std::isfinite(l) && l == std::floor(l)) std::snprintf(buf, sizeof buf, "2^%d", int(l));
  else std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

HistogramFractions fractions(const train::TensorHistogram& h) {
  HistogramFractions f;
  for (uint32_t c : h.bins) f.total += c;
  if (f.total == 0) return f;
  double ls = std::log2(std::max(h.loss_scale, 1e-38f));
  double under_unscaled = 0, under_scaled = 0, over = h.bins[kHistInf] + h.bins[kHistNan];
  for (int b = 0; b < kHistLogBins; ++b) {
    // Bin b holds [2^(e), 2^(e+1)) with e = kHistMinExp + b (bin 0 also
    // holds everything smaller); a bin counts when all of it is below the limit.
    double e = kHistMinExp + b;
    if (e + 1 <= kFp16MinSubnormalLog2) under_unscaled += h.bins[b];
    if (e + 1 + ls <= kFp16MinSubnormalLog2) under_scaled += h.bins[b];
    if (e + ls >= kFp16MaxLog2) over += h.bins[b];
  }
  f.zero = h.bins[kHistZero] / f.total;
  f.underflow_unscaled = under_unscaled / f.total;
  f.underflow_scaled = under_scaled / f.total;
  f.overflow_scaled = over / f.total;
  return f;
}

void draw_dashboard(const RunHistory& h, DashboardState& state, PlotProbe* probe,
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

  ImGui::BeginGroup();
  norm_panel(h, probe, ImVec2(half, row * 0.8f));
  ImGui::EndGroup();
  ImGui::SameLine();
  ImGui::BeginGroup();
  time_panel(h, probe, ImVec2(half, row * 0.8f));
  ImGui::EndGroup();

  histogram_panel(h, state, probe, ImVec2(avail.x, ImGui::GetContentRegionAvail().y));
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace vkamp::ui
