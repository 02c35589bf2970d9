// The dashboard: every panel of a training run, drawn with ImGui into the
// current frame. The live app (vkamp-studio) and the offscreen --report
// picture draw the same function; the app adds its controls on the left.
#pragma once
#include <functional>
#include <string>

#include "histogram_bands.hpp"
#include "plot.hpp"
#include "app/run_history.hpp"

namespace vkamp::ui {

struct DashboardState {
  int histogram_tensor = 0;  // which tensor's histogram is drawn large
  bool show_raw_loss = true;
  ImGuiTextFilter tensor_filter;  // picks the per-tensor table's rows (tensor_table.cpp)
};

// Fills the whole display with one window: a header, `controls` (when
// given) in a column on the left, and the panels. `probe`, when given,
// receives every series drawn this frame.
void draw_dashboard(const app::RunHistory& h, DashboardState& state, PlotProbe* probe,
                    const std::function<void()>& controls = {});

// "2^15" for powers of two, "%g" otherwise.
std::string scale_label(double s);

}  // namespace vkamp::ui
