// The settings-file reader: yaml-cpp parses the file; this walks the maps,
// translates the Cerebras trainer layout to flat keys through one table,
// and reports every problem with the file and line.
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

#include "vkamp/config/setting.hpp"

namespace vkamp::config {
namespace {

// The Cerebras Model Zoo trainer layout (trainer: init: precision: and
// trainer: init: optimizer:), one row per nested path. The sections are
// the paths' prefixes. Values go through the flat key's row unchanged: its
// parser already takes Cerebras's values (fp16_type float16 | bfloat16 |
// cbfloat16; loss_scaling_factor "dynamic" or a number; optimizer_type
// SGD | Adam | AdamW, compared in lower case).
struct NestedKey {
  const char* path;  // dotted path in the file
  const char* key;   // the flat key it sets; nullptr: vkamp has no counterpart
  bool ignored;      // key == nullptr: true = no effect on the numerics, skipped with a note; false = an error
  const char* why;   // key == nullptr: the reason, in the note or the error
};

const NestedKey kNestedKeys[] = {
    // MixedPrecision (Cerebras "Numeric Precision": trainer.init.precision)
    {"trainer.init.precision.fp16_type", "fp16_type", false, ""},
    {"trainer.init.precision.loss_scaling_factor", "loss_scaling_factor", false, ""},
    {"trainer.init.precision.initial_loss_scale", "initial_loss_scale", false, ""},
    {"trainer.init.precision.steps_per_increase", "steps_per_increase", false, ""},
    {"trainer.init.precision.min_loss_scale", "min_loss_scale", false, ""},
    {"trainer.init.precision.max_loss_scale", "max_loss_scale", false, ""},
    {"trainer.init.precision.max_gradient_norm", "max_gradient_norm", false, ""},
    {"trainer.init.precision.max_gradient_value", "max_gradient_value", false, ""},
    {"trainer.init.precision.log_loss_scale", nullptr, true,
     "it only logs the scale; vkamp's --metrics log records loss_scale at every step"},
    {"trainer.init.precision.precision_opt_level", "precision_opt_level", false, ""},
    // The optimizer (trainer.init.optimizer)
    {"trainer.init.optimizer.optimizer_type", "optimizer", false, ""},
    {"trainer.init.optimizer.learning_rate", "learning_rate", false, ""},
    {"trainer.init.optimizer.momentum", "momentum", false, ""},
    {"trainer.init.optimizer.weight_decay", "weight_decay", false, ""},
    // The trainer's seed
    {"trainer.init.seed", "seed", false, ""},
};

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

const NestedKey* find_nested(const std::string& path) {
  for (const NestedKey& k : kNestedKeys)
    if (path == k.path) return &k;
  return nullptr;
}

// trainer, trainer.init, trainer.init.precision, trainer.init.optimizer
bool is_section(const std::string& path) {
  for (const NestedKey& k : kNestedKeys)
    if (starts_with(k.path, path + ".")) return true;
  return false;
}

// The names allowed directly under a section.
std::vector<std::string> children_of(const std::string& section) {
  std::vector<std::string> names;
  for (const NestedKey& k : kNestedKeys) {
    const std::string p = k.path;
    if (!starts_with(p, section + ".")) continue;
    std::string rest = p.substr(section.size() + 1);
    rest = rest.substr(0, rest.find('.'));
    if (std::find(names.begin(), names.end(), rest) == names.end()) names.push_back(rest);
  }
  return names;
}

const char* kind_of(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "no value";
    case YAML::NodeType::Scalar: return "a single value";
    default: return "nothing";
  }
}

// 1-based; yaml-cpp's marks are 0-based and -1 when unknown.
int line_of(const YAML::Mark& m) { return m.line >= 0 ? m.line + 1 : 1; }

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

class Reader {
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
    section(root, "");
  }

  ConfigError error(const YAML::Node& at, const std::string& msg) const { return error(line_of(at.Mark()), msg); }
  ConfigError error(int line, const std::string& msg) const {
    return ConfigError(path_ + ":" + std::to_string(line) + ": " + msg);
  }

 private:
  void section(const YAML::Node& map, const std::string& prefix) {
    std::map<std::string, int> here;  // key as written -> line
    for (auto it = map.begin(); it != map.end(); ++it) {
      // Copies: it-> yields a temporary pair, references into it would dangle.
      const YAML::Node k = it->first;
      const YAML::Node v = it->second;
      const int line = line_of(k.Mark());
      if (!k.IsScalar()) throw error(line, std::string("a key must be a plain name, not ") + kind_of(k));
      const std::string name = k.Scalar();
      const std::string full = prefix.empty() ? name : prefix + "." + name;
      // yaml-cpp keeps a repeated key; a setting given twice is an error.
      auto [first, fresh] = here.emplace(name, line);
      if (!fresh) throw error(line, full + ": set twice (first on line " + std::to_string(first->second) + ")");
      if (is_section(full)) {
        if (v.IsNull()) continue;  // an empty section
        if (!v.IsMap())
          throw error(line, full + ": expected a section of 'key: value' lines, got " + kind_of(v));
        section(v, full);
        continue;
      }
      std::string key = name;
      if (!prefix.empty()) {
        const NestedKey* nk = find_nested(full);
        if (!nk) throw error(line, unknown_nested(full, prefix, name));
        if (!nk->key) {
          if (!nk->ignored) throw error(line, full + " is not supported: " + nk->why);
          std::fprintf(stderr, "%s:%d: note: %s ignored: %s\n", path_.c_str(), line, full.c_str(), nk->why);
          continue;
        }
        key = nk->key;
      }
      setting(line, key, full, v);
    }
  }

  void setting(int line, const std::string& key, const std::string& label, const YAML::Node& v) {
    std::string canonical;
    try {
      canonical = canonical_(key);
    } catch (const ConfigError& e) {
      if (label != key) throw error(line, label + ": " + e.what());
      throw error(line, e.what());
    }
    if (v.IsNull())
      throw error(line, label + ": no value (write " + label + ": VALUE, or \"\" for an empty string)");
    if (!v.IsScalar()) throw error(line, label + ": expected a single value, got " + kind_of(v));
    auto [first, fresh] = seen_.emplace(canonical, line);
    if (!fresh) throw error(line, label + ": set twice (first on line " + std::to_string(first->second) + ")");
    try {
      apply_(key, v.Scalar(), label);
    } catch (const ConfigError& e) {
      throw error(line, e.what());
    }
  }

  // "unknown key 'trainer.init.precision.fp16_typo' (did you mean 'trainer.init.precision.fp16_type'?)"
  static std::string unknown_nested(const std::string& full, const std::string& section, const std::string& name) {
    const std::vector<std::string> names = children_of(section);
    std::string hint = suggest_key(name, names);
    if (std::find(names.begin(), names.end(), hint) == names.end()) hint = closest_match(name, names);
    std::string msg = "unknown key '" + full + "'";
    if (!hint.empty()) msg += " (did you mean '" + section + "." + hint + "'?)";
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    return msg + "; " + section + " takes " + list;
  }

  const std::string& path_;
  const std::function<std::string(const std::string&)>& canonical_;
  const std::function<void(const std::string&, const std::string&, const std::string&)>& apply_;
  std::map<std::string, int> seen_;  // canonical key -> line it was set on
};

}  // namespace

void read_settings_file(const std::string& path, const std::function<std::string(const std::string&)>& canonical,
                        const std::function<void(const std::string&, const std::string&, const std::string&)>& apply) {
  std::ifstream in(path, std::ios::binary);
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
}

}  // namespace vkamp::config
