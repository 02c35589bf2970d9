// The one command-line parser of every vkamp binary (the samples, the
// tools, vkamp-studio, the benchmarks). A program declares its flags as
// rows of a settings table (config::Setting<Options>: key, flag, help,
// parser, default shown) over its own options struct, borrows the shared
// rows (--device, --precision, --batch, ...) from run_settings() by key,
// and binds them to the object they fill. The parser then gives every
// binary the same behaviour: --flag VALUE and --flag=VALUE, --name and
// --no-name for a switch, -h/--help and --version (exit 0), and for an
// unknown or misspelt flag a ConfigError naming the closest flag (exit 2).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "vkamp/config/setting.hpp"

namespace vkamp::app {

// One line of --help: the flag as typed, what it does, the default shown
// ("" shows none).
struct HelpLine {
  std::string flag, meaning, shown_default;
};

// A row's lines: its own, and one for its key's flag where --help shows another.
template <class Root>
std::vector<HelpLine> help_lines(const config::Setting<Root>& s, const Root& defaults);

// A row of some settings table bound to the object it fills.
struct Flag {
  std::string key;                     // the setting's key; "did you mean" also searches keys
  std::vector<std::string> names;      // every spelling without "--": the flag, the key's, aliases
  bool is_switch = false;              // --name and --no-name, no value
  const char* group = config::kGeneralGroup;
  std::vector<HelpLine> help;
  std::function<void(const std::string& value, const std::string& label)> parse;
  std::function<void()> check;         // the row's rule on the parsed object (empty: none)
};

// `rows` bound to `target`; --help shows the defaults read from `defaults`.
template <class Root>
std::vector<Flag> bind_rows(const std::vector<config::Setting<Root>>& rows, Root& target, const Root& defaults);

// What --help says above the flags.
struct Program {
  std::string name;      // "vkamp-predict"
  std::string synopsis;  // "--weights FILE.safetensors --data FILE [flags]"
  std::string about;     // paragraphs
  bool takes_config = false;  // --config FILE (the training binaries)
  std::string epilogue;  // after the flags (may be empty)
  std::vector<std::string> listed_keys;  // --help lists only these flags' rows (empty: all)
};

struct ParsedFlags {
  bool help = false, version = false;
  std::vector<std::string> configs;  // --config FILE, in order
  struct Item {
    const Flag* flag;
    std::string label;  // the flag as typed, for messages
    std::string value;
  };
  std::vector<Item> items;
  // Applies every item in order (the flags' parsers).
  void apply() const;
};

// Splits the arguments by `flags`: every spelling is checked before any
// value is applied. -h/--help or --version anywhere wins. Throws
// ConfigError on an unknown flag (naming the closest), a missing value or
// a stray argument.
ParsedFlags split_flags(const Program& program, int argc, char** argv, const std::vector<Flag>& flags);

// Runs every flag's check (the single-field rules); throws ConfigError.
void check_flags(const std::vector<Flag>& flags);

// --help: "usage: NAME SYNOPSIS", the about text, then the flags by group
// (General first, with --config, -h/--help and --version), in one layout.
std::string usage(const Program& program, const std::vector<Flag>& flags);

// --version: "NAME 0.3.0 (git v0.3.0-12-gabcdef1)"; the git part where the
// build found a git checkout (app/version.hpp).
std::string version_line(const std::string& name);

// A whole parse for a program: split, then `apply` (which applies the
// items and may throw ConfigError), then the checks. Prints --help or
// --version on stdout and returns 0, or prints "NAME: why" and "(see NAME
// --help)" on stderr and returns 2; returns -1 when the program goes on.
int parse_or_exit(const Program& program, int argc, char** argv, const std::vector<Flag>& flags,
                  const std::function<void(const ParsedFlags&)>& apply = nullptr);

// ---- templates

template <class Root>
std::vector<HelpLine> help_lines(const config::Setting<Root>& s, const Root& d) {
  std::string flag = s.help_shows_negation ? "--no-" + s.flag.substr(2) : s.flag;
  if (*s.help.value) flag += std::string(" ") + s.help.value;
  std::string meaning = s.help.text;
  for (const std::string& alias : s.aliases) meaning += " (also " + config::flag_of(alias) + ")";
  const std::string shown = s.show ? s.show(d) : std::string();
  std::vector<HelpLine> lines{{flag, meaning, shown.empty() ? shown : shown + s.help.note}};
  if (!s.flag_alias_help.empty())
    lines.push_back({config::flag_of(s.key) + " " + s.help.value, s.flag_alias_help, ""});
  return lines;
}

template <class Root>
std::vector<Flag> bind_rows(const std::vector<config::Setting<Root>>& rows, Root& target, const Root& defaults) {
  std::vector<Flag> flags;
  for (const config::Setting<Root>& s : rows) {
    Flag f;
    f.key = s.key;
    f.names.push_back(s.flag.substr(2));
    if (!s.is_switch) {
      if (config::flag_of(s.key) != s.flag) f.names.push_back(config::flag_of(s.key).substr(2));
      for (const std::string& a : s.aliases) f.names.push_back(config::flag_of(a).substr(2));
    }
    f.is_switch = s.is_switch;
    f.group = s.help.group;
    f.help = help_lines(s, defaults);
    f.parse = [&target, p = s.parse](const std::string& v, const std::string& l) { p(target, v, l); };
    if (s.check) f.check = [&target, c = s.check] { c(target); };
    flags.push_back(std::move(f));
  }
  return flags;
}

}  // namespace vkamp::app
