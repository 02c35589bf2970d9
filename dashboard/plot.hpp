// A small plotting layer over ImGui's draw lists (Debian's ImGui 1.86 has
// no ImPlot): a framed area with ticks, lines decimated to the pixel width,
// markers, shaded bands and bars. Every series drawn is also reported to a
// PlotProbe when one is attached, which is how the tests see what was drawn.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include <imgui.h>

namespace vkamp::ui {

struct SeriesProbe {
  std::string panel, series;
  size_t points = 0;      // finite points handed to the plot
  double min = 0, max = 0;  // over those points (in data units)
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // the plot's frame, in pixels
};

// Collects what one frame drew. Cleared at the start of each frame.
struct PlotProbe {
  std::vector<SeriesProbe> series;
  const SeriesProbe* find(const std::string& panel, const std::string& series) const;
};

struct Axis {
  double lo = 0, hi = 1;
  bool log2 = false;         // lo/hi are exponents; ticks read 2^k
  const char* unit = "";     // after each tick's number, e.g. "%"
  double ticks_from = -1e300, ticks_to = 1e300;  // ticks only here (a histogram's special bins have none)
};

class PlotArea {
 public:
  // Reserves `size` in the current window (x fills the width when 0) and
  // draws the frame, the grid and the tick labels.
  PlotArea(const char* panel, ImVec2 size, Axis x, Axis y, PlotProbe* probe);

  ImVec2 at(double x, double y) const;  // data (y as exponent on a log2 axis) to pixels
  bool hovered() const { return hovered_; }
  double mouse_x() const;  // data x under the mouse

  // A polyline, decimated to min/max per pixel column; non-finite points
  // break the line. y values are raw (log2 is applied on a log2 axis).
  void line(const char* series, const std::vector<float>& xs, const std::vector<float>& ys, ImU32 color,
            float thickness = 1.5f);
  // Vertical ticks along the bottom edge at each x, for events.
  void markers(const char* series, const std::vector<float>& xs, ImU32 color, float height_fraction = 0.12f);
  // A shaded band between two x values (data units), with a label at the top.
  void x_band(double x0, double x1, ImU32 color, const char* label = nullptr);
  // Bars from the bottom: one per value, at centres xs with the given width.
  void bars(const char* series, const std::vector<float>& xs, const std::vector<float>& heights, float width,
            ImU32 color);
  void vertical_line(double x, ImU32 color, const char* label = nullptr);
  // Text at data x, `row` lines below the top, kept inside the frame:
  // centred on x (align 0.5) or starting just right of it (align 0).
  void text_at(double x, int row, const char* text, ImU32 color, float align = 0.5f);
  // Text centred on data x in the tick row under the frame, for a bar
  // that has a name instead of a tick.
  void text_below(double x, const char* text, ImU32 color);
  float left() const { return p0_.x; }
  float right() const { return p1_.x; }
  float top() const { return p0_.y; }

 private:
  void report(const char* series, size_t points, double lo, double hi);
  double ty(double y) const;  // value to axis units

  std::string panel_;
  Axis x_, y_;
  ImVec2 p0_, p1_;
  ImDrawList* dl_ = nullptr;
  PlotProbe* probe_ = nullptr;
  bool hovered_ = false;
};

// The larger font ImGuiBackend loads, for figures that must stand out (the
// default font when there is none).
ImFont* large_font();

// A range [lo, hi] that holds every finite value (with a margin), or
// [fallback_lo, fallback_hi] when there is none.
Axis fit_axis(const std::vector<float>& v, bool log2, double fallback_lo, double fallback_hi, size_t from = 0);

}  // namespace vkamp::ui
