// What the dashboard's panels share (dashboard.cpp lays them out, one file
// each): the colours, the title line, the step axis, and the helpers more
// than one panel uses.
#pragma once
#include <string>

#include "dashboard.hpp"
#include "plot.hpp"
#include "vkamp/train/gpu_state.hpp"

namespace vkamp::ui {

using train::kHistInf;
using train::kHistLogBins;
using train::kHistMinExp;
using train::kHistNan;
using train::kHistZero;

inline constexpr ImU32 kLossRaw = IM_COL32(100, 150, 220, 110);
inline constexpr ImU32 kLossSmooth = IM_COL32(120, 190, 255, 255);
inline constexpr ImU32 kAccuracy = IM_COL32(120, 220, 140, 255);
inline constexpr ImU32 kScale = IM_COL32(250, 200, 80, 255);
inline constexpr ImU32 kSkipped = IM_COL32(240, 70, 70, 255);
inline constexpr ImU32 kGrowth = IM_COL32(110, 210, 120, 255);
inline constexpr ImU32 kNorm = IM_COL32(200, 140, 240, 255);
inline constexpr ImU32 kTime = IM_COL32(120, 210, 210, 255);
inline constexpr ImU32 kBars = IM_COL32(210, 210, 230, 255);
// The underflow lines: lost unscaled as the histogram table marks it, the
// subnormals as the histogram's subnormal band, the headroom its own.
inline constexpr ImU32 kLostUnscaled = IM_COL32(255, 120, 100, 255);
inline constexpr ImU32 kSubnormalLine = IM_COL32(230, 160, 40, 255);
inline constexpr ImU32 kHeadroom = IM_COL32(150, 230, 110, 255);
// The zero bar is no exponent bin: its own colour, like inf and NaN.
inline constexpr ImU32 kZeroBar = IM_COL32(110, 170, 250, 255);
inline constexpr ImU32 kNonfiniteBar = IM_COL32(250, 110, 90, 255);
inline constexpr ImU32 kSlotDivider = IM_COL32(9, 9, 12, 255);
inline constexpr ImU32 kLabelText = IM_COL32(235, 235, 235, 235);
inline constexpr ImU32 kUnscaledLine = IM_COL32(255, 255, 255, 140);
inline constexpr ImU32 kHighlight = IM_COL32(70, 52, 25, 255);
inline constexpr ImU32 kFigures = IM_COL32(255, 215, 140, 255);
// The format's ranges, shaded behind the histogram.
inline constexpr ImU32 kUnderflowBand = IM_COL32(200, 60, 60, 70);
inline constexpr ImU32 kSubnormalBand = IM_COL32(230, 160, 40, 70);
inline constexpr ImU32 kNormalBand = IM_COL32(60, 170, 90, 60);
inline constexpr ImU32 kOverflowBand = IM_COL32(200, 60, 60, 90);

// The panel's title, with `detail` greyed beside it.
void panel_title(const char* title, const char* detail = nullptr);
// Steps 0 to the run's last (at least 10).
Axis step_axis(const app::RunHistory& h);
// Where tensor `name` sits in the run's underflow accounting, or -1.
int gradient_index(const app::RunHistory& h, const std::string& name);
// The end of a name that fits `width`, after "..": the end of a tensor's
// name is what tells it from its neighbours (...attn.c_proj.weight).
std::string tail_that_fits(const std::string& name, float width);

// The panels, each in a box of `size`; `probe`, when given, receives the
// series drawn.
void loss_panel(const app::RunHistory& h, DashboardState& st, PlotProbe* probe, ImVec2 size);
void scale_panel(const app::RunHistory& h, PlotProbe* probe, ImVec2 size);
void underflow_panel(const app::RunHistory& h, const DashboardState& st, PlotProbe* probe, ImVec2 size);
void norm_panel(const app::RunHistory& h, PlotProbe* probe, ImVec2 size);
void time_panel(const app::RunHistory& h, PlotProbe* probe, ImVec2 size);
void batch_norm_panel(const app::RunHistory& h, PlotProbe* probe, ImVec2 size);
void histogram_panel(const app::RunHistory& h, DashboardState& st, PlotProbe* probe, ImVec2 size);
// The histogram panel's table of every tensor's fractions, at most
// `max_height` tall (tensor_table.cpp); `lost_now` heads the column of
// what is lost at the current scale.
void tensor_table(const app::RunHistory& h, DashboardState& st, const char* lost_now, float max_height);

}  // namespace vkamp::ui
