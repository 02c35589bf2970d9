// --report FILE.png: the dashboard of a finished run, drawn offscreen into
// a Vulkan image and written as a PNG. Needs no window and no X server.
#pragma once
#include <cstdint>
#include <string>

#include "plot.hpp"
#include "app/run_history.hpp"

namespace vkamp::ui {

struct ReportOptions {
  std::string path;
  std::string device;  // as --device; empty = the best device
  uint32_t width = 1600, height = 1000;
};

// Draws `h` and writes the PNG. Returns what the frame plotted (for tests
// and for a one-line summary). Throws vkamp::Error on failure.
PlotProbe render_report(const app::RunHistory& h, const ReportOptions& opt);

}  // namespace vkamp::ui
