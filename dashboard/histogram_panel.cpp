// The histogram panel: the picked tensor's gradient exponents against the format's ranges.
#include "panels.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

namespace vkamp::ui {
namespace {

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

}  // namespace

void histogram_panel(const app::RunHistory& h, DashboardState& st, PlotProbe* probe, ImVec2 size) {
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
  // Above the note, as tall as the panel leaves.
  const float note_h = ImGui::CalcTextSize(note, nullptr, false, ImGui::GetContentRegionAvail().x).y;
  tensor_table(h, st, lost_now, ImGui::GetContentRegionAvail().y - note_h - ImGui::GetStyle().ItemSpacing.y - 2);
  ImGui::TextWrapped("%s", note);
  ImGui::EndGroup();
}

}  // namespace vkamp::ui
