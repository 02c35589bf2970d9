// Command-line flags shared by every training binary (samples, studio):
// one flag per row of run_settings(), --some-name VALUE for the key
// some_name, plus --config FILE and --help.
#pragma once
#include <string>
#include <vector>

#include "app/run_options.hpp"

namespace vkamp::app {

// One line of --help: the flag as typed, what it does, the default shown
// ("" shows none).
struct HelpLine {
  std::string flag, meaning, shown_default;
};

// A row's lines: its own, and one for its key's flag where --help shows another.
std::vector<HelpLine> help_lines(const config::Setting<RunOptions>& s, const RunOptions& defaults);

struct CliResult {
  bool help = false;  // --help was given: print usage() and exit 0
};

// The flags, grouped, for --help. `defaults` are the values shown as
// [default: ...]: the binary's own.
std::string common_usage(const RunOptions& defaults = RunOptions{}, Rows rows = Rows::Common);

// Applies --config FILE first (wherever it appears), then every other flag
// in order, then validate(). Throws vkamp::ConfigError on anything it cannot use.
CliResult parse_command_line(int argc, char** argv, RunOptions& opts, Rows rows = Rows::Common);

}  // namespace vkamp::app
