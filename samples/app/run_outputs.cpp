#include "app/run_outputs.hpp"

namespace vkamp::app {

std::string numbered_output(const std::string& path, unsigned run) {
  if (path.empty() || run <= 1) return path;
  const size_t name = path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1;
  size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || dot <= name) dot = path.size();  // no extension, or a leading dot
  return path.substr(0, dot) + "-run" + std::to_string(run) + path.substr(dot);
}

RunOptions with_numbered_outputs(RunOptions cfg, unsigned run) {
  for (std::string* p : {&cfg.metrics_path, &cfg.report_path, &cfg.save_path, &cfg.checkpoint_path})
    *p = numbered_output(*p, run);
  return cfg;
}

}  // namespace vkamp::app
