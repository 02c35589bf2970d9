// The command-line parser: each flag is a row of run_settings() (its
// dashed key, its renamed flag, its aliases; --name/--no-name for a
// switch), plus --config FILE and --help.
#include "app/cli.hpp"

#include <string_view>
#include <vector>

namespace vkamp::app {
namespace {

using Row = config::Setting<RunOptions>;
using vkamp::ConfigError;

// One way to write a flag, without the leading "--".
struct Spelling {
  std::string name;
  const Row* row;
  int switch_value;  // a switch: 1 (--name) or 0 (--no-name); -1 takes a value
};

const std::vector<Spelling>& spellings(Rows rows) {
  auto build = [](Rows which) {
    std::vector<Spelling> v;
    for (const Row& s : run_settings(which)) {
      const std::string bare = s.flag.substr(2);
      if (s.is_switch) {
        v.push_back({bare, &s, 1});
        v.push_back({"no-" + bare, &s, 0});
        continue;
      }
      v.push_back({bare, &s, -1});
      if (config::flag_of(s.key) != s.flag) v.push_back({config::flag_of(s.key).substr(2), &s, -1});
      for (const std::string& a : s.aliases) v.push_back({config::flag_of(a).substr(2), &s, -1});
    }
    return v;
  };
  static const std::vector<Spelling> sets[] = {build(Rows::Common), build(Rows::WithData),
                                               build(Rows::LanguageModel)};
  return sets[size_t(rows)];
}

const Spelling* find_spelling(const std::string& name, Rows rows) {
  for (const Spelling& s : spellings(rows))
    if (s.name == name) return &s;
  return nullptr;
}

[[noreturn]] void unknown_flag(const std::string& arg, const std::string& name, Rows rows) {
  std::vector<std::string> flags = {"config", "help"};
  for (const Spelling& s : spellings(rows)) flags.push_back(s.name);
  std::string msg = "unknown flag '" + arg + "'";
  std::string hint = config::closest_match(name, flags);
  if (hint.empty()) {
    // Another tool's name (--growth-interval), or a key spelled with '_'.
    std::string key;
    for (char c : name) key += (c == '-') ? '_' : c;
    key = config::suggest_key(key, run_setting_keys(rows));
    if (!key.empty()) hint = config::flag_of(key).substr(2);
  }
  if (!hint.empty()) msg += " (did you mean --" + hint + "?)";
  throw ConfigError(msg);
}

struct Item {
  std::string flag;  // as the user wrote it, e.g. "--lr"
  const Row* row;
  std::string value;
};

// The arguments split into settings files and (flag, value) items, every
// flag's spelling checked before anything is applied.
struct Split {
  std::vector<std::string> configs;
  std::vector<Item> items;
};

std::string not_a_flag(int argc, char** argv, int i, Rows rows) {
  std::string msg = "unexpected argument '" + std::string(argv[i]) + "': options are --flag VALUE";
  if (i > 1 && i - 1 < argc && std::string_view(argv[i - 1]).substr(0, 2) == "--") {
    const Spelling* prev = find_spelling(std::string(argv[i - 1] + 2), rows);
    if (prev && prev->switch_value >= 0) msg += " and " + std::string(argv[i - 1]) + " takes no value";
  }
  return msg;
}

Split split_arguments(int argc, char** argv, Rows rows) {
  Split out;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i] ? argv[i] : "";
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) throw ConfigError(not_a_flag(argc, argv, i, rows));
    const size_t eq = arg.find('=');
    const bool inline_value = eq != std::string::npos;
    const std::string name = arg.substr(2, inline_value ? eq - 2 : std::string::npos);
    const std::string flag = "--" + name;
    const std::string inline_text = inline_value ? arg.substr(eq + 1) : std::string();
    const Spelling* sp = name == "config" ? nullptr : find_spelling(name, rows);
    if (name != "config" && !sp) unknown_flag(inline_value ? flag : arg, name, rows);
    if (sp && sp->switch_value >= 0) {
      // --resume=false / --progress=true set the value given; the --no- spellings take none.
      if (inline_value && sp->switch_value == 0) throw ConfigError(flag + " takes no value (got '" + arg + "')");
      out.items.push_back({flag, sp->row, inline_value ? inline_text : sp->switch_value ? "true" : "false"});
      continue;
    }
    std::string value = inline_text;
    if (!inline_value) {
      if (i + 1 >= argc || std::string_view(argv[i + 1] ? argv[i + 1] : "").substr(0, 2) == "--")
        throw ConfigError(flag + ": missing value");
      value = argv[++i];
    }
    if (sp) {
      out.items.push_back({flag, sp->row, value});
    } else {
      if (value.empty()) throw ConfigError(flag + ": missing file name");
      out.configs.push_back(value);
    }
  }
  return out;
}

}  // namespace

CliResult parse_command_line(int argc, char** argv, RunOptions& opts, Rows rows) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i] ? argv[i] : "";
    if (a == "--help" || a == "-h") return {true};  // help wins over anything else on the line
  }
  const Split split = split_arguments(argc, argv, rows);
  // The files, then the flags in order, then the checks.
  for (const std::string& file : split.configs) apply_config_file(file, opts, rows);
  for (const Item& it : split.items) it.row->parse(opts, it.value, it.flag);
  config::resolve_amp_level(opts);
  validate(opts, rows);
  return {};
}

}  // namespace vkamp::app
