// Settings files are YAML, read with yaml-cpp. Two layouts, which may be
// mixed in one file:
//  - flat `key: value` lines, one per setting (the keys are the rows' keys
//    and aliases, setting.hpp);
//  - the Cerebras Model Zoo trainer layout, nested maps under
//    trainer: init: precision: {...} and trainer: init: optimizer: {...};
//    one table in settings_file.cpp maps each nested path to a flat key
//    (trainer.init.precision.fp16_type -> fp16_type, ...).
// Every value must be a single scalar (no lists or maps); YAML null (an
// empty value, `null` or `~`) is "no value" and an error. The reader knows
// no flat keys itself: the table of rows it is given says which exist.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "vkamp/config/setting.hpp"

namespace vkamp::config {

// What a file says besides its settings: the length of a Model Zoo
// schedule (its phases' total_iters, warm-up included; 0 = none), which
// vkamp's own cosine replaces by the run's length, so that a run can say
// when the two no longer match (a --max-steps that cuts it).
struct SettingsFileFacts {
  uint32_t schedule_steps = 0;
};

// Calls apply(key, value, label) for each setting in the file, in file
// order: `key` is the flat key (a nested path already translated), `label`
// what messages should call it (the key as written, or the full dotted
// path such as trainer.init.precision.fp16_type). `canonical` names the
// setting a flat key stands for (aliases share one) and throws ConfigError
// for an unknown key. A setting given twice (by any of its names or paths)
// is an error. Every error, YAML syntax errors included, is a ConfigError
// that starts with "FILE:LINE: " (1-based); an unreadable file's message
// names the file.
SettingsFileFacts read_settings_file(
    const std::string& path, const std::function<std::string(const std::string&)>& canonical,
    const std::function<void(const std::string& key, const std::string& value, const std::string& label)>& apply);

// Applies a settings file to root through the rows; messages name the key.
template <class Root>
SettingsFileFacts apply_settings_file(const std::vector<Setting<Root>>& rows, const std::string& path, Root& root) {
  auto row_of = [&](const std::string& key) {
    const Setting<Root>* s = find_setting(rows, key);
    if (!s) throw ConfigError(unknown_key_message(key, keys_of(rows)));
    return s;
  };
  return read_settings_file(
      path, [&](const std::string& key) { return row_of(key)->key; },
      [&](const std::string& key, const std::string& value, const std::string& label) {
        row_of(key)->parse(root, value, label);
      });
}

}  // namespace vkamp::config
