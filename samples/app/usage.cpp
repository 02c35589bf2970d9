// --help: every row of run_settings() under its group, with the default
// read from the binary's own RunOptions.
#include <algorithm>
#include <sstream>

#include "app/cli.hpp"

namespace vkamp::app {

std::vector<HelpLine> help_lines(const config::Setting<RunOptions>& s, const RunOptions& d) {
  std::string flag = s.help_shows_negation ? "--no-" + s.flag.substr(2) : s.flag;
  if (*s.help.value) flag += std::string(" ") + s.help.value;
  std::string meaning = s.help.text;
  for (const std::string& alias : s.aliases) meaning += " (also " + config::flag_of(alias) + ")";
  const std::string shown = s.show(d);
  std::vector<HelpLine> lines{{flag, meaning, shown.empty() ? shown : shown + s.help.note}};
  if (!s.flag_alias_help.empty())
    lines.push_back({config::flag_of(s.key) + " " + s.help.value, s.flag_alias_help, ""});
  return lines;
}

namespace {

using Line = HelpLine;

std::vector<Line> group_lines(const char* group, const RunOptions& d, Rows rows) {
  std::vector<Line> lines;
  if (group == config::kGeneralGroup)
    lines.push_back({"--config FILE", "YAML file: `key: value` lines or the Cerebras trainer layout, applied before every other flag", "none"});
  for (const auto& s : run_settings(rows))
    if (s.help.group == group)
      for (Line& l : help_lines(s, d)) lines.push_back(std::move(l));
  if (group == config::kGeneralGroup) lines.push_back({"-h, --help", "print this help and exit", ""});
  return lines;
}

}  // namespace

std::string common_usage(const RunOptions& d, Rows rows) {
  std::vector<std::pair<const char*, std::vector<Line>>> groups;
  size_t width = 0;
  for (const char* g : config::kHelpGroups) {
    groups.emplace_back(g, group_lines(g, d, rows));
    if (groups.back().second.empty()) {
      groups.pop_back();
      continue;
    }
    for (const Line& l : groups.back().second) width = std::max(width, l.flag.size());
  }
  width += 2;

  std::ostringstream os;
  os << "Options (FLAG VALUE and FLAG=VALUE both work):\n";
  for (const auto& [title, lines] : groups) {
    os << "\n" << title << ":\n";
    for (const Line& l : lines) {
      os << "  " << l.flag << std::string(width - l.flag.size(), ' ') << l.meaning;
      if (!l.shown_default.empty()) os << " [default: " << l.shown_default << "]";
      os << "\n";
    }
  }
  os << "\nEvery flag --some-name VALUE is also the YAML key `some_name: VALUE` for --config\n"
        "(--loss-scale is loss_scaling_factor, --no-progress is `progress: false`).\n"
        "The file may also use the Cerebras trainer layout (trainer: init: precision: / optimizer:).\n"
        "Flags override the file wherever --config appears on the command line.\n";
  return os.str();
}

}  // namespace vkamp::app
