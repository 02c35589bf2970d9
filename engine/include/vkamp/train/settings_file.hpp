// The YAML subset settings files are written in: `key: value` lines,
// comments with #, quoted values, nothing nested. The reader knows nothing
// of the keys; a table of rows (setting.hpp) says which exist.
#pragma once
#include <functional>
#include <string>

#include "vkamp/train/setting.hpp"

namespace vkamp::train {

// Calls apply(key, value) for each line. `canonical` names the setting a
// key stands for (aliases share one) and throws ConfigError for an unknown
// key; a setting given twice is an error. Every error is a ConfigError
// that starts with "FILE:LINE: ".
void read_settings_file(const std::string& path, const std::function<std::string(const std::string&)>& canonical,
                        const std::function<void(const std::string&, const std::string&)>& apply);

// Applies a settings file to root through the rows; messages name the key.
template <class Root>
void apply_settings_file(const std::vector<Setting<Root>>& rows, const std::string& path, Root& root) {
  auto row_of = [&](const std::string& key) {
    const Setting<Root>* s = find_setting(rows, key);
    if (!s) throw ConfigError(unknown_key_message(key, keys_of(rows)));
    return s;
  };
  read_settings_file(
      path, [&](const std::string& key) { return row_of(key)->key; },
      [&](const std::string& key, const std::string& value) { row_of(key)->parse(root, value, key); });
}

}  // namespace vkamp::train
