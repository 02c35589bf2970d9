// The Cerebras Model Zoo trainer layout (`trainer: init: ...`) inside a
// settings file: settings_file.cpp hands the `trainer` section to
// read_model_zoo_trainer, which translates what vkamp uses into flat keys
// and lists once what it does not use. Internal to the engine's config.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>

#include "vkamp/config_error.hpp"

namespace vkamp::config {

// 1-based; yaml-cpp's marks are 0-based and -1 when unknown.
inline int line_of(const YAML::Mark& m) { return m.line >= 0 ? m.line + 1 : 1; }
const char* kind_of(const YAML::Node& n);  // "a map", "a list", ...

// What the layout reader needs from the file reader.
class FileSettings {
 public:
  virtual ~FileSettings() = default;
  // A setting the file writes: a single value (else an error naming
  // `label`), set once per file by any of its names.
  virtual void set(int line, const std::string& key, const std::string& label, const YAML::Node& value) = 0;
  virtual void set_text(int line, const std::string& key, const std::string& label, const std::string& value) = 0;
  // A value the layout implies without writing it (the default of the
  // optimizer class the file names, epochs that let max_steps decide):
  // applied only when the file has not set the key so far, and a flat key
  // later in the file overrides it.
  virtual void imply(const std::string& key, const std::string& label, const std::string& value) = 0;
  // The schedule's length in steps (SettingsFileFacts::schedule_steps).
  virtual void schedule_steps(uint32_t steps) = 0;
  virtual ConfigError error(int line, const std::string& msg) const = 0;
  virtual const std::string& file() const = 0;
};

// Reads `trainer:` (its node and the line of its key).
void read_model_zoo_trainer(const YAML::Node& trainer, int line, FileSettings& file);

}  // namespace vkamp::config
