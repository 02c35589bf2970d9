// --help of a training binary: every row of run_settings() under its
// group, with the default read from the binary's own RunOptions.
#include "app/cli.hpp"

namespace vkamp::app {

const char kConfigEpilogue[] =
    "Every flag --some-name VALUE is also the YAML key `some_name: VALUE` for --config\n"
    "(--loss-scale is loss_scaling_factor, --no-progress is `progress: false`).\n"
    "The file may also use the Cerebras trainer layout (trainer: init: precision: / optimizer:).\n"
    "Flags override the file wherever --config appears on the command line.\n";

std::string common_usage(const RunOptions& d, Rows rows) {
  RunOptions scratch = d;
  Program p;
  p.takes_config = true;
  p.epilogue = kConfigEpilogue;
  const std::string text = usage(p, run_flags(scratch, d, rows));
  return text.substr(text.find("Options"));  // without the usage line
}

}  // namespace vkamp::app
