#include "plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace vkamp::ui {
namespace {

constexpr ImU32 kFrame = IM_COL32(90, 90, 100, 255);
constexpr ImU32 kGrid = IM_COL32(60, 60, 70, 255);
constexpr ImU32 kTickText = IM_COL32(170, 170, 180, 255);
constexpr ImU32 kTextBackdrop = IM_COL32(16, 16, 22, 170);
constexpr float kLeftMargin = 52, kBottomMargin = 18;

// About five round steps across [lo, hi].
double nice_step(double span) {
  double raw = span / 5, p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * p) return m * p;
  return 10 * p;
}

// A power of two of exponents: 2^-40, 2^-32, ... reads better than 2^-36, 2^-27.
double log2_step(double span, int ticks) {
  double step = 1;
  while (step * ticks < span) step *= 2;
  return step;
}

std::string tick_text(double v, const Axis& a) {
  char buf[48];
  if (a.log2) std::snprintf(buf, sizeof buf, "2^%d%s", int(std::lround(v)), a.unit);
  else std::snprintf(buf, sizeof buf, "%.3g%s", std::abs(v) < 1e-12 ? 0.0 : v, a.unit);
  return buf;
}

}  // namespace

const SeriesProbe* PlotProbe::find(const std::string& panel, const std::string& name) const {
  for (auto& s : series)
    if (s.panel == panel && s.series == name) return &s;
  return nullptr;
}

PlotArea::PlotArea(const char* panel, ImVec2 size, Axis x, Axis y, PlotProbe* probe)
    : panel_(panel), x_(x), y_(y), probe_(probe) {
  if (size.x <= 0) size.x = ImGui::GetContentRegionAvail().x;
  ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(panel, size);
  hovered_ = ImGui::IsItemHovered();
  dl_ = ImGui::GetWindowDrawList();
  p0_ = ImVec2(origin.x + kLeftMargin, origin.y + 4);
  p1_ = ImVec2(origin.x + size.x - 6, origin.y + size.y - kBottomMargin);
  if (x_.hi <= x_.lo) x_.hi = x_.lo + 1;
  if (y_.hi <= y_.lo) y_.hi = y_.lo + 1;
  dl_->AddRectFilled(p0_, p1_, IM_COL32(24, 24, 30, 255));

  // Grid and ticks; a log2 axis ticks on whole exponents.
  double ys = y_.log2 ? std::max(1.0, std::ceil((y_.hi - y_.lo) / 6)) : nice_step(y_.hi - y_.lo);
  for (double v = std::ceil(y_.lo / ys) * ys; v <= y_.hi + 1e-9; v += ys) {
    float py = at(x_.lo, y_.log2 ? std::exp2(v) : v).y;
    dl_->AddLine(ImVec2(p0_.x, py), ImVec2(p1_.x, py), kGrid);
    std::string t = tick_text(v, y_);
    ImVec2 ts = ImGui::CalcTextSize(t.c_str());
    dl_->AddText(ImVec2(p0_.x - ts.x - 4, py - ts.y / 2), kTickText, t.c_str());
  }
  double xs = x_.log2 ? log2_step(x_.hi - x_.lo, 9) : nice_step(x_.hi - x_.lo);
  for (double v = std::ceil(x_.lo / xs) * xs; v <= x_.hi + 1e-9; v += xs) {
    if (v < x_.ticks_from || v > x_.ticks_to) continue;
    float px = p0_.x + float((v - x_.lo) / (x_.hi - x_.lo)) * (p1_.x - p0_.x);
    dl_->AddLine(ImVec2(px, p0_.y), ImVec2(px, p1_.y), kGrid);
    std::string t = tick_text(v, x_);
    ImVec2 ts = ImGui::CalcTextSize(t.c_str());
    dl_->AddText(ImVec2(px - ts.x / 2, p1_.y + 2), kTickText, t.c_str());
  }
  dl_->AddRect(p0_, p1_, kFrame);
}

double PlotArea::ty(double y) const { return y_.log2 ? std::log2(y) : y; }

ImVec2 PlotArea::at(double x, double y) const {
  double fx = (x - x_.lo) / (x_.hi - x_.lo), fy = (ty(y) - y_.lo) / (y_.hi - y_.lo);
  fx = std::clamp(fx, 0.0, 1.0);
  fy = std::clamp(fy, -0.01, 1.01);
  return ImVec2(p0_.x + float(fx) * (p1_.x - p0_.x), p1_.y - float(fy) * (p1_.y - p0_.y));
}

double PlotArea::mouse_x() const {
  float mx = ImGui::GetIO().MousePos.x;
  return x_.lo + (mx - p0_.x) / (p1_.x - p0_.x) * (x_.hi - x_.lo);
}

void PlotArea::report(const char* series, size_t points, double lo, double hi) {
  if (!probe_) return;
  probe_->series.push_back({panel_, series, points, lo, hi, p0_.x, p0_.y, p1_.x, p1_.y});
}

void PlotArea::line(const char* series, const std::vector<float>& xs, const std::vector<float>& ys, ImU32 color,
                    float thickness) {
  size_t n = std::min(xs.size(), ys.size()), finite = 0;
  double lo = INFINITY, hi = -INFINITY;
  dl_->PushClipRect(p0_, p1_, true);
  // Per pixel column keep the first, min and max points: the line's shape
  // survives at any zoom while the vertex count stays at ~3 per pixel.
  std::vector<ImVec2> run;
  auto flush = [&] {
    if (run.size() >= 2) dl_->AddPolyline(run.data(), int(run.size()), color, 0, thickness);
    else if (run.size() == 1) dl_->AddCircleFilled(run[0], thickness, color);
    run.clear();
  };
  int column = -1;
  ImVec2 cmin, cmax;
  for (size_t i = 0; i < n; ++i) {
    double y = ys[i];
    bool ok = std::isfinite(y) && (!y_.log2 || y > 0);
    if (!ok) {
      flush();
      column = -1;
      continue;
    }
    ++finite;
    lo = std::min(lo, y);
    hi = std::max(hi, y);
    ImVec2 p = at(xs[i], y);
    int c = int(p.x);
    if (c != column) {
      if (column >= 0 && cmin.y != cmax.y) {
        run.push_back(cmin.x < cmax.x ? cmin : cmax);
        run.push_back(cmin.x < cmax.x ? cmax : cmin);
      }
      column = c;
      cmin = cmax = p;
      run.push_back(p);
    } else {
      if (p.y < cmin.y) cmin = p;
      if (p.y > cmax.y) cmax = p;
    }
  }
  if (column >= 0 && cmin.y != cmax.y) {
    run.push_back(cmin);
    run.push_back(cmax);
  }
  flush();
  dl_->PopClipRect();
  report(series, finite, finite ? lo : 0, finite ? hi : 0);
}

void PlotArea::markers(const char* series, const std::vector<float>& xs, ImU32 color, float height_fraction) {
  float h = (p1_.y - p0_.y) * height_fraction;
  double lo = INFINITY, hi = -INFINITY;
  int last = -1;
  for (float x : xs) {
    lo = std::min(lo, double(x));
    hi = std::max(hi, double(x));
    ImVec2 p = at(x, y_.log2 ? std::exp2(y_.lo) : y_.lo);
    if (int(p.x) == last) continue;  // one tick per pixel column
    last = int(p.x);
    dl_->AddLine(ImVec2(p.x, p1_.y), ImVec2(p.x, p1_.y - h), color, 2.0f);
    dl_->AddLine(ImVec2(p.x, p0_.y), ImVec2(p.x, p1_.y), (color & 0x00FFFFFF) | 0x30000000);
  }
  report(series, xs.size(), xs.empty() ? 0 : lo, xs.empty() ? 0 : hi);
}

void PlotArea::x_band(double x0, double x1, ImU32 color, const char* label) {
  auto px = [&](double x) {
    return p0_.x + float(std::clamp((x - x_.lo) / (x_.hi - x_.lo), 0.0, 1.0)) * (p1_.x - p0_.x);
  };
  float a = px(x0), b = px(x1);
  if (b <= a) return;
  dl_->AddRectFilled(ImVec2(a, p0_.y), ImVec2(b, p1_.y), color);
  if (label) {
    ImVec2 ts = ImGui::CalcTextSize(label);
    if (ts.x < b - a - 4) dl_->AddText(ImVec2((a + b - ts.x) / 2, p0_.y + 2), IM_COL32(230, 230, 230, 220), label);
  }
}

void PlotArea::bars(const char* series, const std::vector<float>& xs, const std::vector<float>& heights, float width,
                    ImU32 color) {
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < std::min(xs.size(), heights.size()); ++i) {
    lo = std::min(lo, double(heights[i]));
    hi = std::max(hi, double(heights[i]));
    if (heights[i] <= 0) continue;
    ImVec2 top = at(xs[i] - width / 2, heights[i]);
    ImVec2 bottom = at(xs[i] + width / 2, y_.lo);
    dl_->AddRectFilled(ImVec2(top.x + 1, top.y), ImVec2(std::max(top.x + 2, bottom.x - 1), bottom.y), color);
  }
  report(series, xs.size(), xs.empty() ? 0 : lo, xs.empty() ? 0 : hi);
}

void PlotArea::vertical_line(double x, ImU32 color, const char* label) {
  ImVec2 p = at(x, y_.log2 ? std::exp2(y_.lo) : y_.lo);
  if (x < x_.lo || x > x_.hi) return;
  dl_->AddLine(ImVec2(p.x, p0_.y), ImVec2(p.x, p1_.y), color, 2.0f);
  if (label) dl_->AddText(ImVec2(p.x + 3, p0_.y + 16), color, label);
}

void PlotArea::text_at(double x, int row, const char* text, ImU32 color, float align) {
  ImVec2 ts = ImGui::CalcTextSize(text);
  float left = at(x, y_.lo).x - ts.x * align + (align == 0 ? 4 : 0);
  float px = std::clamp(left, p0_.x + 2, std::max(p0_.x + 2, p1_.x - ts.x - 2));
  ImVec2 pos(px, p0_.y + 2 + row * ImGui::GetTextLineHeight());
  // A dark backdrop keeps it legible over bands, bars and lines.
  dl_->AddRectFilled(ImVec2(pos.x - 2, pos.y), ImVec2(pos.x + ts.x + 2, pos.y + ts.y), kTextBackdrop, 2);
  dl_->AddText(pos, color, text);
}

void PlotArea::text_below(double x, const char* text, ImU32 color) {
  ImVec2 ts = ImGui::CalcTextSize(text);
  dl_->AddText(ImVec2(at(x, y_.lo).x - ts.x / 2, p1_.y + 2), color, text);
}

ImFont* large_font() {
  ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  return atlas->Fonts.Size > 1 ? atlas->Fonts[1] : ImGui::GetFont();
}

Axis fit_axis(const std::vector<float>& v, bool log2, double fallback_lo, double fallback_hi, size_t from) {
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = from; i < v.size(); ++i) {
    double x = v[i];
    if (!std::isfinite(x) || (log2 && x <= 0)) continue;
    if (log2) x = std::log2(x);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  if (!(lo <= hi)) return {fallback_lo, fallback_hi, log2};
  if (log2) return {std::floor(lo) - 1, std::ceil(hi) + 1, true};
  double pad = (hi - lo) * 0.08 + (hi == lo ? std::max(1e-6, std::abs(hi) * 0.1) : 0);
  return {lo - pad, hi + pad, false};
}

}  // namespace vkamp::ui
