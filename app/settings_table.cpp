#include "app/settings_table.hpp"

#include <algorithm>
#include <set>
#include <sstream>
#include <string_view>

#include "app/cli.hpp"
#include "vkamp/knobs.hpp"

namespace vkamp::app {
namespace {

using Row = config::Setting<RunOptions>;

// Every row once: the common ones, then vkamp-train's and charlm's own.
std::vector<const Row*> all_rows() {
  std::vector<const Row*> rows;
  std::set<std::string> seen;
  for (Rows which : {Rows::Common, Rows::WithData, Rows::LanguageModel})
    for (const Row& s : run_settings(which))
      if (seen.insert(s.key).second) rows.push_back(&s);
  return rows;
}

std::string pad(const std::string& s, size_t width) { return s + std::string(width > s.size() ? width - s.size() : 1, ' '); }

}  // namespace

std::string settings_table() {
  const RunOptions defaults;
  const std::vector<const Row*> rows = all_rows();
  size_t key_w = 0, flag_w = 0;
  for (const Row* s : rows) {
    key_w = std::max(key_w, s->key.size());
    for (const HelpLine& l : help_lines(*s, defaults)) flag_w = std::max(flag_w, l.flag.size());
  }
  std::ostringstream os;
  os << "Settings: the flag on the command line, the key in a --config file (defaults are vkamp's;\n"
        "a sample's --help shows its own):\n";
  for (const char* group : config::kHelpGroups) {
    bool titled = false;
    for (const Row* s : rows) {
      if (std::string_view(s->help.group) != group) continue;  // the text: equal literals may sit apart
      if (!titled) os << "\n" << group << ":\n";
      titled = true;
      bool first = true;
      for (const HelpLine& l : help_lines(*s, defaults)) {
        os << "  " << pad(first ? s->key : "", key_w + 2) << pad(l.flag, flag_w + 2) << l.meaning;
        if (!l.shown_default.empty()) os << " [default: " << l.shown_default << "]";
        os << "\n";
        first = false;
      }
    }
  }
  return os.str();
}

std::string env_knobs_table() {
  size_t name_w = 0;
  for (const EnvKnob& k : env_knobs()) name_w = std::max(name_w, std::string(k.name).size());
  std::ostringstream os;
  os << "Environment variables (a flag or option, where one exists, wins):\n\n";
  for (const EnvKnob& k : env_knobs()) {
    os << "  " << pad(k.name, name_w + 2) << k.values_text() << "  [default: " << k.fallback << "]  ("
       << (k.test_only() ? "test-only" : k.reader) << ")\n"
       << "  " << std::string(name_w + 2, ' ') << k.purpose << "\n";
  }
  return os.str();
}

}  // namespace vkamp::app
