// --report FILE.png, the one door from the command-line programs to the
// dashboard: the app layer declares it, and the build links one of two
// definitions: the dashboard's (dashboard/report_picture.cpp), or, in a
// build without it (-DVKAMP_BUILD_UI=OFF), app/no_dashboard.cpp.
// So a program never includes the dashboard and builds without it.
#pragma once
#include <string>

#include "app/run_history.hpp"

namespace vkamp::app {

// False in a build without the dashboard: --report is then refused.
bool dashboard_built();

// Draws the dashboard of `h` offscreen on `device` (as --device; empty =
// the best device) and writes the PNG to `path`. Throws vkamp::Error on
// failure (and always without the dashboard).
void write_report_picture(const RunHistory& h, const std::string& path, const std::string& device);

}  // namespace vkamp::app
