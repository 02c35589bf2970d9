// Command-line flags shared by every training binary (samples, studio).
#pragma once
#include <string>

#include "vkamp/train/config.hpp"

namespace vkamp::train {

struct CliResult {
  bool help = false;  // --help was given: print usage() and exit 0
};

// The common flags, for --help:
//   --device SEL  --precision P  --loss-scale dynamic|none|<number>
//   --epochs N  --batch N  --lr X  --data DIR  --config FILE
//   --inject-overflow LIST  --metrics FILE  --seed N  --help
// and the rest of vkamp's settings as --<yaml-key-with-dashes> VALUE.
// `defaults` are the values shown as [default: ...]: the binary's own.
std::string common_usage(const TrainConfig& defaults = TrainConfig{});

// Applies --config FILE first (wherever it appears), then every other flag
// in order, then validate(). Throws ConfigError on anything it cannot use.
CliResult parse_command_line(int argc, char** argv, TrainConfig& cfg);

}  // namespace vkamp::train
