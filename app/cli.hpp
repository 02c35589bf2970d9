// Command-line flags shared by every training binary (samples, studio):
// one flag per row of run_settings(), --some-name VALUE for the key
// some_name, plus --config FILE, --help and --version, parsed by the one
// parser of app/flags.hpp.
#pragma once
#include <string>
#include <vector>

#include "app/flags.hpp"
#include "app/run_options.hpp"

namespace vkamp::app {

struct CliResult {
  bool help = false;     // --help was given: print usage() and exit 0
  bool version = false;  // --version was given: print version_line() and exit 0
};

// run_settings(rows) bound to `opts`, --help showing `defaults`.
std::vector<Flag> run_flags(RunOptions& opts, const RunOptions& defaults, Rows rows = Rows::Common);

// The rows of run_settings() named by `keys`, in that order, bound to
// `target`: a tool that is not a training run takes --device, --precision,
// --batch and the like from the one declaration (whichever of the Common,
// WithData and LanguageModel rows holds the key).
std::vector<Flag> shared_flags(RunOptions& target, const RunOptions& defaults, const std::vector<std::string>& keys);

// What a training binary's --help adds after the flags: --config's file.
extern const char kConfigEpilogue[];

// The flags, grouped, for --help. `defaults` are the values shown as
// [default: ...]: the binary's own.
std::string common_usage(const RunOptions& defaults = RunOptions{}, Rows rows = Rows::Common);

// A program's own flags first, then the run's rows but those whose
// spelling one of its own flags takes (vkamp-studio's --size WxH is not
// charlm's --size).
std::vector<Flag> with_extra(const std::vector<Flag>& extra, std::vector<Flag> run);

// Applies --config FILE first (wherever it appears), then every other flag
// in order, then validate(). Throws vkamp::ConfigError on anything it
// cannot use. `extra` are the program's own flags (bound to its own
// options), parsed alongside (with_extra) and checked after validate().
CliResult parse_command_line(int argc, char** argv, RunOptions& opts, Rows rows = Rows::Common,
                             const std::vector<Flag>& extra = {});

}  // namespace vkamp::app
