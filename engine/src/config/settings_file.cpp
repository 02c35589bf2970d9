// The settings-file reader: yaml-cpp parses the file; this walks the flat
// keys, hands the Cerebras trainer layout (`trainer:`) to
// model_zoo_layout.cpp, and reports every problem with the file and line.
#include "vkamp/config/settings_file.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "model_zoo_layout.hpp"
#include "vkamp/config/setting.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::config {
namespace {

// The documents in a file, counted from yaml-cpp's events before the file
// is loaded. YAML::Load reads only the first document, and yaml-cpp 0.7's
// LoadAll loops forever on some broken input (a ',' at the top level
// starts an empty document again and again without moving on); this
// stops at the second document and says where it starts.
class DocumentCounter : public YAML::EventHandler {
 public:
  struct Second {
    YAML::Mark mark;
    bool stuck;  // it starts where the first did: yaml-cpp made no progress
  };
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++docs_ > 1) throw Second{mark, mark.pos == first_.pos};
    first_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  int docs_ = 0;
  YAML::Mark first_;
};

class Reader : public FileSettings {
 public:
  Reader(const std::string& path, const std::function<std::string(const std::string&)>& canonical,
         const std::function<void(const std::string&, const std::string&, const std::string&)>& apply)
      : path_(path), canonical_(canonical), apply_(apply) {}

  void document(const YAML::Node& root) {
    if (root.IsNull()) return;  // an empty file or only comments
    if (root.IsSequence()) throw error(root, "YAML lists are not supported at the top level, write 'key: value'");
    if (root.IsScalar())
      throw error(root, "expected 'key: value' lines (with a space after the colon), got '" + root.Scalar() + "'");
    if (!root.IsMap()) throw error(root, "expected 'key: value' lines");
    section(root);
  }

  ConfigError error(const YAML::Node& at, const std::string& msg) const { return error(line_of(at.Mark()), msg); }
  ConfigError error(int line, const std::string& msg) const override {
    return ConfigError(path_ + ":" + std::to_string(line) + ": " + msg);
  }
  const std::string& file() const override { return path_; }

  void set(int line, const std::string& key, const std::string& label, const YAML::Node& v) override {
    canonical(line, key, label);  // an unknown key is named before its value is looked at
    if (v.IsNull())
      throw error(line, label + ": no value (write " + label + ": VALUE, or \"\" for an empty string)");
    if (!v.IsScalar()) throw error(line, label + ": expected a single value, got " + kind_of(v));
    set_text(line, key, label, v.Scalar());
  }

  void set_text(int line, const std::string& key, const std::string& label, const std::string& value) override {
    auto [first, fresh] = seen_.emplace(canonical(line, key, label), line);
    if (!fresh) throw error(line, label + ": set twice (first on line " + std::to_string(first->second) + ")");
    try {
      apply_(key, value, label);
    } catch (const ConfigError& e) {
      throw error(line, e.what());
    }
  }

  void imply(const std::string& key, const std::string& label, const std::string& value) override {
    if (seen_.count(canonical(1, key, label))) return;
    apply_(key, value, label);  // a value the layout's table wrote: valid
  }

  void schedule_steps(uint32_t steps) override { facts_.schedule_steps = steps; }
  const SettingsFileFacts& facts() const { return facts_; }

 private:
  void section(const YAML::Node& map) {
    std::map<std::string, int> here;  // key as written -> line
    for (auto it = map.begin(); it != map.end(); ++it) {
      // Copies: it-> yields a temporary pair, references into it would dangle.
      const YAML::Node k = it->first;
      const YAML::Node v = it->second;
      const int line = line_of(k.Mark());
      if (!k.IsScalar()) throw error(line, std::string("a key must be a plain name, not ") + kind_of(k));
      const std::string name = k.Scalar();
      // yaml-cpp keeps a repeated key; a setting given twice is an error.
      auto [first, fresh] = here.emplace(name, line);
      if (!fresh) throw error(line, name + ": set twice (first on line " + std::to_string(first->second) + ")");
      if (name == "trainer") {
        if (!v.IsNull() && !v.IsMap() && !v.IsSequence())
          throw error(line, name + ": expected a section of 'key: value' lines, got " + kind_of(v));
        read_model_zoo_trainer(v, line, *this);
        continue;
      }
      set(line, name, name, v);
    }
  }

  std::string canonical(int line, const std::string& key, const std::string& label) const {
    try {
      return canonical_(key);
    } catch (const ConfigError& e) {
      if (label != key) throw error(line, label + ": " + e.what());
      throw error(line, e.what());
    }
  }

  const std::string& path_;
  const std::function<std::string(const std::string&)>& canonical_;
  const std::function<void(const std::string&, const std::string&, const std::string&)>& apply_;
  std::map<std::string, int> seen_;  // canonical key -> line it was set on
  SettingsFileFacts facts_;
};

}  // namespace

SettingsFileFacts read_settings_file(
    const std::string& path, const std::function<std::string(const std::string&)>& canonical,
    const std::function<void(const std::string&, const std::string&, const std::string&)>& apply) {
  std::ifstream in(vkamp::platform::path_from_utf8(path), std::ios::binary);
  if (!in) {
    int err = errno;
    throw ConfigError("cannot read config file '" + path + "': " + (err ? std::strerror(err) : "open failed"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError("error while reading config file '" + path + "'");
  Reader reader(path, canonical, apply);
  YAML::Node root;
  try {
    std::istringstream events(text.str());
    YAML::Parser parser(events);
    DocumentCounter counter;
    while (parser.HandleNextDocument(counter)) {
    }
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {  // syntax errors: yaml-cpp's message, our FILE:LINE
    throw reader.error(line_of(e.mark), "YAML syntax error: " + e.msg);
  } catch (const DocumentCounter::Second& second) {
    if (second.stuck) throw reader.error(line_of(second.mark), "YAML syntax error: unexpected text");
    throw reader.error(line_of(second.mark), "more than one YAML document (a second '---'): write the settings as one");
  }
  try {
    reader.document(root);
  } catch (const YAML::Exception& e) {  // not expected: every node's type is checked before use
    throw reader.error(line_of(e.mark), std::string("YAML: ") + e.msg);
  }
  return reader.facts();
}

}  // namespace vkamp::config
