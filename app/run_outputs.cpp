#include "app/run_outputs.hpp"

#include <filesystem>

namespace vkamp::app {

std::string numbered_output(const std::string& path, unsigned run) {
  if (path.empty() || run <= 1) return path;
  // std::filesystem's stem and extension: "a.tar.gz" -> "a.tar" + ".gz", and
  // a leading dot is part of the stem (".hidden" has no extension).
  std::filesystem::path p(path);
  return p.replace_filename(p.stem().string() + "-run" + std::to_string(run) + p.extension().string()).string();
}

RunOptions with_numbered_outputs(RunOptions cfg, unsigned run) {
  for (std::string* p : {&cfg.metrics_path, &cfg.report_path, &cfg.save_path, &cfg.checkpoint_path})
    *p = numbered_output(*p, run);
  return cfg;
}

}  // namespace vkamp::app
