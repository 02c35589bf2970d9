#include "dashboard.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <optional>

#include "vkamp/train/gpu_state.hpp"
#include "vkamp/train/underflow.hpp"

namespace vkamp::ui {
namespace {

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
// The underflow lines: lost unscaled as the histogram table marks it, the
// subnormals as the histogram's subnormal band, the headroom its own.
constexpr ImU32 kLostUnscaled = IM_COL32(255, 120, 100, 255);
constexpr ImU32 kSubnormalLine = IM_COL32(230, 160, 40, 255);
constexpr ImU32 kHeadroom = IM_COL32(150, 230, 110, 255);
// The zero bar is no exponent bin: its own colour, like inf and NaN.
constexpr ImU32 kZeroBar = IM_COL32(110, 170, 250, 255);
constexpr ImU32 kNonfiniteBar = IM_COL32(250, 110, 90, 255);
constexpr ImU32 kSlotDivider = IM_COL32(9, 9, 12, 255);
constexpr ImU32 kLabelText = IM_COL32(235, 235, 235, 235);
constexpr ImU32 kUnscaledLine = IM_COL32(255, 255, 255, 140);
constexpr ImU32 kHighlight = IM_COL32(70, 52, 25, 255);
constexpr ImU32 kFigures = IM_COL32(255, 215, 140, 255);
// The format's ranges, shaded behind the histogram.
constexpr ImU32 kUnderflowBand = IM_COL32(200, 60, 60, 70);
constexpr ImU32 kSubnormalBand = IM_COL32(230, 160, 40, 70);
constexpr ImU32 kNormalBand = IM_COL32(60, 170, 90, 60);
constexpr ImU32 kOverflowBand = IM_COL32(200, 60, 60, 90);

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

// Where tensor `name` sits in the run's underflow accounting, or -1.
int gradient_index(const RunHistory& h, const std::string& name) {
  const auto& names = h.gradients.tensors;
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : int(it - names.begin());
}

// The tensor picked in the histogram table, when the run has its underflow
// series: its index in h.tensor_underflow, or -1.
int picked_tensor(const RunHistory& h, const DashboardState& st) {
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

// The underflow accounting of every step, under the loss scale on the same
// step axis: the % of the gradient elements the scale saves (they would
// flush to 0 unscaled) and of those subnormal at the scale; below, how many
// doublings of the scale remain before the largest gradient overflows. The
// tensor picked in the histogram table is drawn thin, at its histogram steps.
void underflow_panel(const RunHistory& h, const DashboardState& st, PlotProbe* probe, ImVec2 size) {
  const UnderflowSeries& u = h.underflow;
  const int picked = picked_tensor(h, st);
  const UnderflowSeries* t = picked >= 0 ? &h.tensor_underflow[picked] : nullptr;
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

// The end of a name that fits `width`, after "..": the end of a tensor's
// name is what tells it from its neighbours (...attn.c_proj.weight).
std::string tail_that_fits(const std::string& name, float width) {
  if (ImGui::CalcTextSize(name.c_str()).x <= width) return name;
  for (size_t from = 1; from < name.size(); ++from) {
    std::string t = ".." + name.substr(from);
    if (ImGui::CalcTextSize(t.c_str()).x <= width) return t;
  }
  return "..";
}

// A coloured square and its text, on the current line when it ends left
// of `right` (screen x): the legend stays as wide as its plot.
void legend_item(ImU32 color, const char* text, bool first, float right) {
  const float box = ImGui::GetTextLineHeight() - 2;
  const float w = box + 4 + ImGui::CalcTextSize(text).x;
  if (!first) {
    ImGui::SameLine(0, 16);
    if (ImGui::GetCursorScreenPos().x + w > right) ImGui::NewLine();
  }
  ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 1), ImVec2(p.x + box, p.y + 1 + box), color);
  ImGui::Dummy(ImVec2(box, box));
  ImGui::SameLine(0, 4);
  ImGui::TextUnformatted(text);
}

// Opaque versions of the bands' colours, for the legend's squares.
ImU32 opaque(ImU32 c) { return c | IM_COL32(0, 0, 0, 255); }

// The figures a newcomer looks for first, large on a highlighted line:
// what the format would lose without loss scaling, and what it loses now.
void lost_figures(const HistogramFractions& f, const FormatBands& b, float width) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImFont* big = large_font();
  const float h = std::max(big->FontSize, 2 * ImGui::GetTextLineHeight()) + 6;
  dl->AddRectFilled(p, ImVec2(p.x + width, p.y + h), kHighlight, 3);
  dl->PushClipRect(p, ImVec2(p.x + width - 4, p.y + h), true);
  char text[160];
  std::snprintf(text, sizeof text, "lost unscaled %.1f%%   lost at %s %.1f%%", 100 * f.underflow_unscaled,
                pow2_label(b.scale_log2).c_str(), 100 * f.underflow_scaled);
  const ImVec2 big_at(p.x + 8, p.y + (h - big->FontSize) / 2);
  dl->AddText(big, big->FontSize, big_at, kFigures, text);
  const float x = big_at.x + big->CalcTextSizeA(big->FontSize, FLT_MAX, 0, text).x + 16;
  const float row = ImGui::GetTextLineHeight();
  // What the figures count, beside them when it fits whole (the note under
  // the table says it too).
  char what[96], edges[96];
  std::snprintf(what, sizeof what, "of its elements flush to 0 in %s:", format_name(b.format));
  std::snprintf(edges, sizeof edges, "|g| <= %s unscaled, %s at %s", pow2_label(b.flush_at + b.scale_log2).c_str(),
                pow2_label(b.flush_at).c_str(), pow2_label(b.scale_log2).c_str());
  if (x + std::max(ImGui::CalcTextSize(what).x, ImGui::CalcTextSize(edges).x) <= p.x + width - 4) {
    dl->AddText(ImVec2(x, p.y + h / 2 - row), kLabelText, what);
    dl->AddText(ImVec2(x, p.y + h / 2), kLabelText, edges);
  }
  dl->PopClipRect();
  ImGui::Dummy(ImVec2(width, h));
}

// The underflow band's label, whatever its width: inside it when it fits,
// else beside its edge, or at the axis's left end when the whole band lies
// below the histogram's first bin.
void underflow_label(PlotArea& p, const FormatBands& b, double first) {
  char text[128];
  std::snprintf(text, sizeof text, "flushed to 0: |g| <= %s at scale %s", pow2_label(b.flush_at).c_str(),
                pow2_label(b.scale_log2).c_str());
  const float inside = p.at(b.flush_at, 0).x - p.at(first, 0).x;
  if (b.flush_at > first && ImGui::CalcTextSize(text).x < inside - 4) {
    p.text_at((first + b.flush_at) / 2, 0, text, kLabelText);
    return;
  }
  char beside[160];
  std::snprintf(beside, sizeof beside, "<- %s%s", text, b.flush_at > first ? "" : " (left of this axis)");
  p.text_at(std::max(b.flush_at, first), 1, beside, kLabelText, 0);
}

// BatchNorm's running statistics, one row per layer: the spread of
// running_mean and running_var across its channels at the newest host read
// (RunHistory::bn_layers), and the batches it has folded in. A variance
// near 0 or a mean far from the others is what a diverging fp16 run shows.
void batch_norm_panel(const RunHistory& h, PlotProbe* probe, ImVec2 size) {
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
    for (const BnLayerStats& l : h.bn_layers) {
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
    for (const BnLayerStats& l : h.bn_layers) {
      const Spread& v = var ? l.running_var : l.running_mean;
      s.min = std::min(s.min, double(v.min));
      s.max = std::max(s.max, double(v.max));
    }
    probe->series.push_back(s);
  }
}

void histogram_panel(const RunHistory& h, DashboardState& st, PlotProbe* probe, ImVec2 size) {
  // x: log2 of the unscaled |g|, ticked on the exponent bins only. The zero
  // bar has its own slot left of them, behind a gap; inf and NaN theirs on
  // the right.
  const double first = kHistMinExp, last = kHistMinExp + kHistLogBins;
  const double x_zero = first - 4, x_inf = last + 2.5, x_nan = last + 5;
  const Axis x_axis{x_zero - 2.5, x_nan + 2, true, "", first, last};
  const float line = ImGui::GetTextLineHeightWithSpacing();
  if (h.histograms.empty()) {
    panel_title("Gradient histograms", h.histogram_interval ? "waiting for the first histogram step"
                                                            : "off in this run (--histogram-interval 0)");
    PlotArea p("histogram", ImVec2(size.x, size.y - line), x_axis, {0, 1, false, "%"}, probe);
    return;
  }
  st.histogram_tensor = std::clamp(st.histogram_tensor, 0, int(h.histograms.size()) - 1);
  const train::TensorHistogram& t = h.histograms[st.histogram_tensor];
  const Format fmt = band_format(h.precision);
  const FormatBands b = format_bands(fmt, t.loss_scale), unscaled = format_bands(fmt, 1);
  const HistogramFractions f = fractions(t, fmt);
  char detail[256];
  std::snprintf(detail, sizeof detail,
                "%s at step %u: unscaled |g| per binade; bars in %% of its %.0f elements; %s's ranges at scale %s%s",
                t.tensor.c_str(), t.step, f.total, format_name(fmt), scale_label(t.loss_scale).c_str(),
                h.precision == Format::F32 ? " (this run is fp32)" : "");
  panel_title("Gradient histogram", detail);

  const float table_w = std::min(640.0f, size.x * 0.46f), plot_w = size.x - table_w - 8;
  ImGui::BeginGroup();
  lost_figures(f, b, plot_w);
  std::vector<float> xs, pct;
  for (int e = 0; e < int(kHistLogBins); ++e) {
    xs.push_back(float(first + e + 0.5));
    pct.push_back(float(100.0 * t.bins[e] / f.total));
  }
  auto share = [&](uint32_t bin) { return float(100.0 * t.bins[bin] / f.total); };
  const float top =
      std::max({*std::max_element(pct.begin(), pct.end()), share(kHistZero), share(kHistInf), share(kHistNan)});
  const float legend_h = line * (plot_w < 900 ? 2 : 1) + 4;
  const float plot_h = ImGui::GetContentRegionAvail().y - legend_h;
  PlotArea p("histogram", ImVec2(plot_w, plot_h), x_axis, {0, std::max(1.0, top * 1.2), false, "%"}, probe);
  // Where each unscaled magnitude lands in the format at the current scale.
  p.x_band(first, std::min(b.flush_at, last), kUnderflowBand);
  p.x_band(std::max(first, b.flush_at), std::min(b.normal_from, last), kSubnormalBand, "subnormal");
  p.x_band(std::max(first, b.normal_from), std::min(last, b.overflow_above), kNormalBand,
           fmt == Format::F16 ? "fp16 normal" : "normal");
  p.x_band(std::max(first, b.overflow_above), last, kOverflowBand, "overflow");
  if (unscaled.flush_at > first && unscaled.flush_at < last) {
    p.vertical_line(unscaled.flush_at, kUnscaledLine);
    p.text_at(unscaled.flush_at, 2, "flush edge without scaling", kUnscaledLine, 0);
  }
  underflow_label(p, b, first);
  // The gap between the zero slot and the exponent bins.
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (double gap : {first - 1.5, last + 1.0}) {
    const float gx = p.at(gap, 0).x;
    dl->AddLine(ImVec2(gx, p.top()), ImVec2(gx, p.at(gap, 0).y), kSlotDivider, 3);
  }
  p.bars("bins", xs, pct, 0.9f, kBars);
  p.bars("zeros", {float(x_zero)}, {share(kHistZero)}, 2.0f, kZeroBar);
  p.bars("inf, NaN", {float(x_inf), float(x_nan)}, {share(kHistInf), share(kHistNan)}, 1.6f, kNonfiniteBar);
  char zero_pct[32];
  std::snprintf(zero_pct, sizeof zero_pct, "%.1f%%", share(kHistZero));
  const float zy = p.at(x_zero, share(kHistZero)).y - ImGui::GetTextLineHeight() - 1;
  const float zx = p.at(x_zero, 0).x - ImGui::CalcTextSize(zero_pct).x / 2;
  dl->AddText(ImVec2(std::max(zx, p.left() + 1), std::max(zy, p.top() + 1)), kZeroBar, zero_pct);
  p.text_below(x_zero, "zeros", kZeroBar);
  p.text_below(x_inf, "inf", kNonfiniteBar);
  p.text_below(x_nan, "NaN", kNonfiniteBar);
  if (p.hovered()) {
    const double mx = p.mouse_x();
    if (mx >= first && mx < last) {
      const int e = int(std::floor(mx - first));
      const double lo = first + e;
      const char* where = lo + 1 <= b.flush_at      ? "flushes to 0"
                          : lo < b.normal_from      ? "subnormal"
                          : lo >= b.overflow_above ? "overflows"
                                                   : "normal";
      ImGui::SetTooltip("|g| in [%s, %s): %u elements (%.2f%%)\nstored at scale %s: %s in %s",
                        pow2_label(lo).c_str(), pow2_label(lo + 1).c_str(), t.bins[e], pct[e],
                        scale_label(t.loss_scale).c_str(), where, format_name(fmt));
    } else if (std::abs(mx - x_zero) < 2.5) {
      ImGui::SetTooltip("stored as zero: %u elements (%.2f%%)%s", t.bins[kHistZero], share(kHistZero),
                        zeros_may_include_flushes(h.precision)
                            ? "\nexact zeros and values that flushed to 0 alike: the stored 0 cannot tell them apart"
                            : "");
    }
  }
  // The legend says what every colour means, whatever fits inside the plot.
  char zeros[96], flushed[96], over[96];
  std::snprintf(zeros, sizeof zeros, "zeros%s %.1f%%",
                zeros_may_include_flushes(h.precision) ? " (exact or flushed)" : "", share(kHistZero));
  std::snprintf(flushed, sizeof flushed, "flushed to 0 (|g| <= %s)", pow2_label(b.flush_at).c_str());
  std::snprintf(over, sizeof over, "overflow (|g| > %s)",
                pow2_label(std::round(b.overflow_above * 10) / 10).c_str());
  legend_item(kZeroBar, zeros, true, p.right());
  legend_item(opaque(kUnderflowBand), flushed, false, p.right());
  legend_item(opaque(kSubnormalBand), "subnormal", false, p.right());
  legend_item(opaque(kNormalBand), "normal", false, p.right());
  legend_item(opaque(kOverflowBand), over, false, p.right());
  legend_item(kNonfiniteBar, "inf, NaN", false, p.right());
  ImGui::EndGroup();

  ImGui::SameLine();
  ImGui::BeginGroup();
  char note[520];
  std::snprintf(note, sizeof note,
                "lost unscaled: nonzero |g| <= %s, which %s rounds to 0 without loss scaling. lost at %s: the same "
                "at the current scale (|g| <= %s). headroom: doublings of the scale left before the tensor's "
                "largest |g| overflows.%s",
                pow2_label(unscaled.flush_at).c_str(), format_name(fmt), scale_label(t.loss_scale).c_str(),
                pow2_label(b.flush_at).c_str(),
                zeros_may_include_flushes(h.precision)
                    ? " A stored zero cannot say whether it was exactly 0 (a dead ReLU, an input that is always "
                      "0) or flushed, so what flushed at the current scale is counted in zeros."
                    : "");
  ImGui::TextDisabled("per tensor, %% of its elements:");
  char lost_now[32];
  std::snprintf(lost_now, sizeof lost_now, "lost at %s", scale_label(t.loss_scale).c_str());
  // As tall as its rows, or as the panel leaves above the note (then it scrolls).
  const ImGuiStyle& style = ImGui::GetStyle();
  const float row_h = ImGui::GetTextLineHeight() + 2 * style.CellPadding.y;
  const float note_h = ImGui::CalcTextSize(note, nullptr, false, ImGui::GetContentRegionAvail().x).y;
  const float table_h = std::min(row_h * float(h.histograms.size() + 2) + 2,
                                 ImGui::GetContentRegionAvail().y - note_h - style.ItemSpacing.y - 2);
  if (ImGui::BeginTable("fractions", 7,
                        ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY,
                        ImVec2(0, std::max(table_h, 3 * row_h)))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("tensor", ImGuiTableColumnFlags_WidthStretch);  // a long name is cut, not the figures
    ImGui::TableSetupColumn("zeros");
    ImGui::TableSetupColumn("lost unscaled");
    ImGui::TableSetupColumn(lost_now);
    ImGui::TableSetupColumn("overflow");
    ImGui::TableSetupColumn("subnormal");
    ImGui::TableSetupColumn("headroom");
    ImGui::TableHeadersRow();
    // One row per tensor (a click picks the plotted one), then their sum.
    // Then the exact accounting of the same step (not the histogram's
    // binades): the subnormals at the scale and the headroom in doublings.
    const auto row = [](const HistogramFractions& r, const train::UnderflowShares* exact) {
      ImGui::TableNextColumn();
      ImGui::Text("%.1f", 100 * r.zero);
      ImGui::TableNextColumn();
      ImGui::TextColored(r.underflow_unscaled > 0.01 ? ImVec4(1, 0.5f, 0.4f, 1) : ImVec4(0.8f, 0.8f, 0.8f, 1),
                         "%.1f", 100 * r.underflow_unscaled);
      ImGui::TableNextColumn();
      ImGui::Text("%.1f", 100 * r.underflow_scaled);
      ImGui::TableNextColumn();
      ImGui::Text("%.1f", 100 * r.overflow_scaled);
      ImGui::TableNextColumn();
      if (exact) ImGui::Text("%.1f", 100 * exact->subnormal);
      ImGui::TableNextColumn();
      if (exact) ImGui::TextUnformatted(exact->headroom ? std::to_string(*exact->headroom).c_str() : "-");
    };
    // The newest per-tensor accounting, when it is the histograms' step.
    const train::TensorUnderflow* latest =
        !h.raw_underflow.empty() && h.raw_underflow.back().step == t.step ? &h.raw_underflow.back() : nullptr;
    for (size_t i = 0; i < h.histograms.size(); ++i) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      const std::string& name = h.histograms[i].tensor;
      const std::string shown = tail_that_fits(name, ImGui::GetContentRegionAvail().x) + "##" + std::to_string(i);
      if (ImGui::Selectable(shown.c_str(), int(i) == st.histogram_tensor, ImGuiSelectableFlags_SpanAllColumns))
        st.histogram_tensor = int(i);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", name.c_str());
      const int g = gradient_index(h, name);
      std::optional<train::UnderflowShares> exact;
      if (latest && g >= 0) exact = h.gradients.of_tensor(size_t(g), latest->stats[size_t(g)]);
      row(fractions(h.histograms[i], fmt), exact ? &*exact : nullptr);
    }
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
    row(fractions(all, fmt), exact_all ? &*exact_all : nullptr);
    ImGui::EndTable();
  }
  ImGui::TextWrapped("%s", note);
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
