// The dashboard's side of app/report_picture.hpp.
#include "app/report_picture.hpp"

#include "report.hpp"

namespace vkamp::app {

bool dashboard_built() { return true; }

void write_report_picture(const app::RunHistory& h, const std::string& path, const std::string& device) {
  ui::ReportOptions opt;
  opt.path = path;
  opt.device = device;
  ui::render_report(h, opt);
}

}  // namespace vkamp::app
