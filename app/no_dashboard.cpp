// app/report_picture.hpp in a build without the dashboard
// (-DVKAMP_BUILD_UI=OFF): the programs refuse --report before training.
#include "app/report_picture.hpp"
#include "vkamp/error.hpp"

namespace vkamp::app {

bool dashboard_built() { return false; }

void write_report_picture(const RunHistory&, const std::string& path, const std::string&) {
  throw Error("--report " + path + ": this build has no dashboard (configured with -DVKAMP_BUILD_UI=OFF)");
}

}  // namespace vkamp::app
