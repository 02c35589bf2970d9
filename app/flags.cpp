#include "app/flags.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string_view>

#include "app/version.hpp"
#include "vkamp/config_error.hpp"

namespace vkamp::app {
namespace {

// One way to write a flag, without the leading "--".
struct Spelling {
  std::string name;
  const Flag* flag;
  int switch_value;  // a switch: 1 (--name) or 0 (--no-name); -1 takes a value
};

std::vector<Spelling> spellings(const std::vector<Flag>& flags) {
  std::vector<Spelling> v;
  for (const Flag& f : flags) {
    if (f.is_switch) {
      v.push_back({f.names[0], &f, 1});
      v.push_back({"no-" + f.names[0], &f, 0});
      continue;
    }
    for (const std::string& n : f.names) v.push_back({n, &f, -1});
  }
  return v;
}

const Spelling* find(const std::vector<Spelling>& all, const std::string& name) {
  for (const Spelling& s : all)
    if (s.name == name) return &s;
  return nullptr;
}

[[noreturn]] void unknown_flag(const Program& p, const std::string& arg, const std::string& name,
                               const std::vector<Spelling>& all, const std::vector<Flag>& flags) {
  std::vector<std::string> names = {"help", "version"};
  if (p.takes_config) names.push_back("config");
  for (const Spelling& s : all) names.push_back(s.name);
  std::string msg = "unknown flag '" + arg + "'";
  std::string hint = config::closest_match(name, names);
  if (hint.empty()) {
    // Another tool's name (--growth-interval), or a key spelled with '_'.
    std::string key;
    for (char c : name) key += (c == '-') ? '_' : c;
    std::vector<std::string> keys;
    for (const Flag& f : flags) keys.push_back(f.key);
    key = config::suggest_key(key, keys);
    for (const Flag& f : flags)
      if (!key.empty() && f.key == key) hint = f.names[0];
  }
  if (!hint.empty()) msg += " (did you mean --" + hint + "?)";
  throw ConfigError(msg);
}

std::string not_a_flag(int argc, char** argv, int i, const std::vector<Spelling>& all) {
  std::string msg = "unexpected argument '" + std::string(argv[i]) + "': options are --flag VALUE";
  if (i > 1 && i - 1 < argc && std::string_view(argv[i - 1]).substr(0, 2) == "--") {
    const Spelling* prev = find(all, std::string(argv[i - 1] + 2));
    if (prev && prev->switch_value >= 0) msg += " and " + std::string(argv[i - 1]) + " takes no value";
  }
  return msg;
}

}  // namespace

void ParsedFlags::apply() const {
  for (const Item& it : items) it.flag->parse(it.value, it.label);
}

ParsedFlags split_flags(const Program& p, int argc, char** argv, const std::vector<Flag>& flags) {
  ParsedFlags out;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i] ? argv[i] : "";
    if (a == "--help" || a == "-h") out.help = true;  // help and version win over anything else on the line
    if (a == "--version") out.version = true;
  }
  if (out.help || out.version) return out;
  const std::vector<Spelling> all = spellings(flags);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i] ? argv[i] : "";
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) throw ConfigError(not_a_flag(argc, argv, i, all));
    const size_t eq = arg.find('=');
    const bool inline_value = eq != std::string::npos;
    const std::string name = arg.substr(2, inline_value ? eq - 2 : std::string::npos);
    const std::string flag = "--" + name;
    const std::string inline_text = inline_value ? arg.substr(eq + 1) : std::string();
    const bool config = p.takes_config && name == "config";
    const Spelling* sp = config ? nullptr : find(all, name);
    if (!config && !sp) unknown_flag(p, inline_value ? flag : arg, name, all, flags);
    if (sp && sp->switch_value >= 0) {
      // --resume=false / --progress=true set the value given; the --no- spellings take none.
      if (inline_value && sp->switch_value == 0) throw ConfigError(flag + " takes no value (got '" + arg + "')");
      out.items.push_back({sp->flag, flag, inline_value ? inline_text : sp->switch_value ? "true" : "false"});
      continue;
    }
    std::string value = inline_text;
    if (!inline_value) {
      if (i + 1 >= argc || std::string_view(argv[i + 1] ? argv[i + 1] : "").substr(0, 2) == "--")
        throw ConfigError(flag + ": missing value");
      value = argv[++i];
    }
    if (sp) {
      out.items.push_back({sp->flag, flag, value});
    } else {
      if (value.empty()) throw ConfigError(flag + ": missing file name");
      out.configs.push_back(value);
    }
  }
  return out;
}

void check_flags(const std::vector<Flag>& flags) {
  for (const Flag& f : flags)
    if (f.check) f.check();
}

std::string usage(const Program& p, const std::vector<Flag>& flags) {
  // The groups in order of first appearance, General first.
  auto listed = [&](const Flag& f) {
    return p.listed_keys.empty() || std::find(p.listed_keys.begin(), p.listed_keys.end(), f.key) != p.listed_keys.end();
  };
  std::vector<const char*> groups{config::kGeneralGroup};
  for (const Flag& f : flags)
    if (std::none_of(groups.begin(), groups.end(), [&](const char* g) { return std::string_view(g) == f.group; }))
      groups.push_back(f.group);
  std::vector<std::pair<const char*, std::vector<HelpLine>>> sections;
  size_t width = 0;
  for (const char* g : groups) {
    std::vector<HelpLine> lines;
    const bool general = std::string_view(g) == config::kGeneralGroup;
    if (general && p.takes_config)
      lines.push_back({"--config FILE",
                       "YAML file: `key: value` lines or the Cerebras trainer layout, applied before every other flag",
                       "none"});
    for (const Flag& f : flags)
      if (std::string_view(f.group) == g && listed(f)) lines.insert(lines.end(), f.help.begin(), f.help.end());
    if (general) {
      lines.push_back({"-h, --help", "print this help and exit", ""});
      lines.push_back({"--version", "print the version and exit", ""});
    }
    for (const HelpLine& l : lines) width = std::max(width, l.flag.size());
    if (!lines.empty()) sections.emplace_back(g, std::move(lines));
  }
  width += 2;
  std::ostringstream os;
  os << "usage: " << p.name << " " << p.synopsis << "\n\n";
  std::string about = p.about;
  while (!about.empty() && about.back() == '\n') about.pop_back();
  if (!about.empty()) os << about << "\n\n";
  os << "Options (FLAG VALUE and FLAG=VALUE both work):\n";
  for (const auto& [title, lines] : sections) {
    os << "\n" << title << ":\n";
    for (const HelpLine& l : lines) {
      os << "  " << l.flag << std::string(width - l.flag.size(), ' ') << l.meaning;
      if (!l.shown_default.empty()) os << " [default: " << l.shown_default << "]";
      os << "\n";
    }
  }
  if (!p.epilogue.empty()) os << "\n" << p.epilogue;
  return os.str();
}

std::string version_line(const std::string& name) {
  std::string line = name + " " + kVersion;
  if (*kGitDescribe) line += std::string(" (git ") + kGitDescribe + ")";
  return line;
}

int parse_or_exit(const Program& p, int argc, char** argv, const std::vector<Flag>& flags,
                  const std::function<void(const ParsedFlags&)>& apply) {
  try {
    const ParsedFlags parsed = split_flags(p, argc, argv, flags);
    if (parsed.help) {
      std::fputs(usage(p, flags).c_str(), stdout);
      return 0;
    }
    if (parsed.version) {
      std::printf("%s\n", version_line(p.name).c_str());
      return 0;
    }
    if (apply) apply(parsed);
    else parsed.apply();
    check_flags(flags);
    return -1;
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "%s: %s\n(see %s --help)\n", p.name.c_str(), e.what(), p.name.c_str());
    return 2;
  }
}

}  // namespace vkamp::app
