#include "setting_labels.hpp"

#include "vkamp/config/setting.hpp"
#include "vkamp/error.hpp"

namespace vkamp::ui {
namespace {

const config::Setting<config::TrainConfig>& row(const std::string& key) {
  const auto* s = config::find_setting(config::training_settings(), key);
  if (!s) throw Error("the studio labels a control with '" + key + "', which is no training setting");
  return *s;
}

}  // namespace

std::string setting_label(const std::string& key) { return row(key).flag; }

std::string setting_tooltip(const std::string& key) {
  const auto& s = row(key);
  std::string t = s.flag;
  if (*s.help.value) t += std::string(" ") + s.help.value;
  t += std::string(": ") + s.help.text + "\n(settings file: " + s.key;
  if (!s.aliases.empty()) {
    t += ", also";
    for (const std::string& a : s.aliases) t += " " + a;
  }
  return t + ")";
}

}  // namespace vkamp::ui
