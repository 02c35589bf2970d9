// The training binaries' command line: the rows of run_settings() through
// the one parser (app/flags.hpp), with --config FILE applied first.
#include "app/cli.hpp"

#include <algorithm>
#include <stdexcept>

namespace vkamp::app {

std::vector<Flag> run_flags(RunOptions& opts, const RunOptions& defaults, Rows rows) {
  return bind_rows(run_settings(rows), opts, defaults);
}

std::vector<Flag> shared_flags(RunOptions& target, const RunOptions& defaults, const std::vector<std::string>& keys) {
  std::vector<Flag> flags;
  for (const std::string& key : keys) {
    const config::Setting<RunOptions>* row = nullptr;
    for (Rows which : {Rows::Common, Rows::WithData, Rows::LanguageModel})
      if (!row) row = config::find_setting(run_settings(which), key);
    if (!row) throw std::logic_error("shared_flags: no setting '" + key + "'");
    std::vector<Flag> one = bind_rows(std::vector<config::Setting<RunOptions>>{*row}, target, defaults);
    flags.push_back(std::move(one.front()));
  }
  return flags;
}

std::vector<Flag> with_extra(const std::vector<Flag>& extra, std::vector<Flag> run) {
  std::vector<Flag> flags = extra;
  for (Flag& f : run) {
    bool shadowed = false;
    for (const Flag& e : extra)
      for (const std::string& n : f.names) shadowed |= std::find(e.names.begin(), e.names.end(), n) != e.names.end();
    if (!shadowed) flags.push_back(std::move(f));
  }
  return flags;
}

CliResult parse_command_line(int argc, char** argv, RunOptions& opts, Rows rows, const std::vector<Flag>& extra) {
  const std::vector<Flag> flags = with_extra(extra, run_flags(opts, opts, rows));
  Program p;
  p.takes_config = true;
  const ParsedFlags parsed = split_flags(p, argc, argv, flags);
  if (parsed.help || parsed.version) return {parsed.help, parsed.version};
  // The files, then the flags in order, then the checks.
  for (const std::string& file : parsed.configs) apply_config_file(file, opts, rows);
  parsed.apply();
  config::resolve_amp_level(opts);
  validate(opts, rows);
  check_flags(extra);
  return {};
}

}  // namespace vkamp::app
