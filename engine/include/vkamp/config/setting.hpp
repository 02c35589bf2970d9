// One row per setting: its YAML key, flag, help line, parser, the default
// --help shows and the single-field rule validate() applies, all declared
// together so that a new knob is one row (training_settings.cpp for the
// trainer's knobs, app/run_settings.cpp for the application's).
// `Root` is the struct the row writes into: TrainConfig, or the
// application's RunOptions, which extends it.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vkamp/config/train_config.hpp"

namespace vkamp::config {

// ---- strict value parsers (setting_values.cpp); messages start with `label`

double parse_double(const std::string& text, const std::string& label);
uint64_t parse_u64(const std::string& text, const std::string& label);
uint32_t parse_u32(const std::string& text, const std::string& label, uint32_t min = 0);
bool parse_bool(const std::string& text, const std::string& label);
[[noreturn]] void fail(const std::string& label, const std::string& msg);
std::string lower(std::string s);
std::string trim(std::string_view s);            // without leading and trailing white space
std::string fmt(double v);                       // as --help and messages print a double
std::string flag_of(const std::string& key);     // "max_gradient_norm" -> "--max-gradient-norm"
std::string names(const std::string& key);      // "--max-gradient-norm (max_gradient_norm)"

// The interval a real-valued setting must lie in; always finite.
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false, hi_open = false;

  static Range at_least(double lo) { return {lo, Range{}.hi, false, true}; }
  static Range above(double lo) { return {lo, Range{}.hi, true, true}; }
  static Range from_to_below(double lo, double hi) { return {lo, hi, false, true}; }  // [lo, hi)
  static Range between(double lo, double hi) { return {lo, hi, true, true}; }         // (lo, hi)

  bool contains(double x) const;
  std::string text() const;  // "> 0", ">= 0", "in [0, 1)"
};

// An enum's names, the first for each value canonical: they parse the
// setting and serve the *_name() functions.
template <class E>
using EnumNames = std::vector<std::pair<const char*, E>>;

template <class E>
const char* name_of(const EnumNames<E>& names, E value) {
  for (const auto& [name, v] : names)
    if (v == value) return name;
  return "?";
}

template <class E>
E parse_name(const EnumNames<E>& names, const std::string& text, const std::string& label) {
  const std::string s = lower(text);
  std::string list;
  for (const auto& [name, value] : names) {
    if (s == name) return value;
    list += (list.empty() ? "" : " | ") + std::string(name);
  }
  fail(label, "unknown value '" + text + "' (expected " + list + ")");
}

// How --help presents a setting.
struct Help {
  const char* group;       // the help section, e.g. kOptimizerGroup
  const char* value;       // "X" in "--lr X"; "" for a switch
  const char* text;        // one line
  const char* note = "";   // added after the default, e.g. " (fp32 max)"
};

template <class Root>
struct Setting {
  std::string key;                   // YAML key; the flag is its dashed spelling
  std::vector<std::string> aliases;  // other keys (and their dashed flags) for it
  std::string flag;                  // the flag --help shows: flag_of(key) unless renamed
  std::string flag_alias_help;       // when flag is not the key's: the help of the key's flag
  Help help;
  bool is_switch = false;            // --name and --no-name, no value on the command line
  bool help_shows_negation = false;  // --help lists --no-name (on by default)
  // Parses `text` into root; messages start with `label` (the key or the flag).
  std::function<void(Root&, const std::string& text, const std::string& label)> parse;
  // The value --help shows as [default: ...]; "" shows none.
  std::function<std::string(const Root&)> show;
  // The single-field rule validate() applies (empty: none); messages start with names(key).
  std::function<void(const Root&)> check;
};

// A field of Root, as a generic lambda: [](auto& c) -> auto& { return c.lr; }.
// Written once per row, it serves both the parser (Root&) and --help (const Root&).
#define VKAMP_FIELD(path) [](auto& c) -> auto& { return c.path; }

// ---- row builders: each derives parse, show and check from one declaration

template <class Root>
Setting<Root> row(std::string key, Help help) {
  Setting<Root> s;
  s.flag = flag_of(key);
  s.key = std::move(key);
  s.help = help;
  return s;
}

template <class Root, class F>
Setting<Root> real(std::string key, Help help, F field, Range range) {
  Setting<Root> s = row<Root>(std::move(key), help);
  const std::string k = s.key;
  s.parse = [field, range](Root& r, const std::string& t, const std::string& l) {
    const double x = parse_double(t, l);
    if (!range.contains(x)) fail(l, "must be " + range.text() + " (got " + t + ")");
    field(r) = x;
  };
  s.show = [field](const Root& r) { return fmt(field(r)); };
  s.check = [field, range, k](const Root& r) {
    const double x = field(r);
    if (!range.contains(x)) throw ConfigError(names(k) + " must be a finite number " + range.text() + ", got " + fmt(x));
  };
  return s;
}

// A uint32_t count, at least `min`.
template <class Root, class F>
Setting<Root> count(std::string key, Help help, F field, uint32_t min = 0) {
  Setting<Root> s = row<Root>(std::move(key), help);
  const std::string k = s.key;
  s.parse = [field, min](Root& r, const std::string& t, const std::string& l) { field(r) = parse_u32(t, l, min); };
  s.show = [field](const Root& r) { return std::to_string(field(r)); };
  if (min > 0)
    s.check = [field, min, k](const Root& r) {
      if (field(r) < min) throw ConfigError(names(k) + " must be >= " + std::to_string(min));
    };
  return s;
}

template <class Root, class F>
Setting<Root> whole(std::string key, Help help, F field) {  // a uint64_t
  Setting<Root> s = row<Root>(std::move(key), help);
  s.parse = [field](Root& r, const std::string& t, const std::string& l) { field(r) = parse_u64(t, l); };
  s.show = [field](const Root& r) { return std::to_string(field(r)); };
  return s;
}

// A switch: --key / --no-key on the command line, true/false in YAML.
template <class Root, class F>
Setting<Root> toggle(std::string key, Help help, F field, const char* on = "on", const char* off = "off") {
  Setting<Root> s = row<Root>(std::move(key), help);
  s.is_switch = true;
  s.parse = [field](Root& r, const std::string& t, const std::string& l) { field(r) = parse_bool(t, l); };
  s.show = [field, on, off](const Root& r) { return std::string(field(r) ? on : off); };
  return s;
}

template <class Root, class E, class F>
Setting<Root> choice(std::string key, Help help, F field, const EnumNames<E>& names) {
  Setting<Root> s = row<Root>(std::move(key), help);
  s.parse = [field, &names](Root& r, const std::string& t, const std::string& l) { field(r) = parse_name(names, t, l); };
  s.show = [field, &names](const Root& r) { return std::string(name_of(names, field(r))); };
  return s;
}

// Free text (a path, a device name); --help shows `empty_means` while it is empty.
template <class Root, class F>
Setting<Root> text(std::string key, Help help, F field, const char* empty_means) {
  Setting<Root> s = row<Root>(std::move(key), help);
  s.parse = [field](Root& r, const std::string& t, const std::string&) { field(r) = t; };
  s.show = [field, empty_means](const Root& r) { return field(r).empty() ? std::string(empty_means) : field(r); };
  return s;
}

// A row over a base struct, used on a struct derived from it.
template <class Derived, class Base>
Setting<Derived> lift(const Setting<Base>& b) {
  Setting<Derived> s;
  s.key = b.key;
  s.aliases = b.aliases;
  s.flag = b.flag;
  s.flag_alias_help = b.flag_alias_help;
  s.help = b.help;
  s.is_switch = b.is_switch;
  s.help_shows_negation = b.help_shows_negation;
  s.parse = [f = b.parse](Derived& r, const std::string& t, const std::string& l) { f(r, t, l); };
  s.show = [f = b.show](const Derived& r) { return f(r); };
  if (b.check) s.check = [f = b.check](const Derived& r) { f(r); };
  return s;
}

// ---- lookups over a table

template <class Root>
const Setting<Root>* find_setting(const std::vector<Setting<Root>>& rows, const std::string& key) {
  for (const Setting<Root>& s : rows) {
    if (s.key == key) return &s;
    for (const std::string& a : s.aliases)
      if (a == key) return &s;
  }
  return nullptr;
}

template <class Root>
std::vector<std::string> keys_of(const std::vector<Setting<Root>>& rows) {
  std::vector<std::string> keys;
  for (const Setting<Root>& s : rows) {
    keys.push_back(s.key);
    keys.insert(keys.end(), s.aliases.begin(), s.aliases.end());
  }
  return keys;
}

// "unknown key 'x' (did you mean 'y'?)"
std::string unknown_key_message(const std::string& key, const std::vector<std::string>& keys);

template <class Root>
void apply_row(const std::vector<Setting<Root>>& rows, const std::string& key, const std::string& value, Root& root,
               const std::string& label) {
  const Setting<Root>* s = find_setting(rows, key);
  if (!s) throw ConfigError(unknown_key_message(key, keys_of(rows)));
  s->parse(root, value, label);
}

template <class Root>
void check_rows(const std::vector<Setting<Root>>& rows, const Root& root) {
  for (const Setting<Root>& s : rows)
    if (s.check) s.check(root);
}

// The rows of TrainConfig (training_settings.cpp), in --help order.
const std::vector<Setting<TrainConfig>>& training_settings();

// Help section titles, in --help order.
inline constexpr const char* kGeneralGroup = "General";
inline constexpr const char* kScalingGroup = "Loss scaling (docs/design.md#loss-scaling; defaults are PyTorch GradScaler's)";
inline constexpr const char* kClippingGroup = "Gradient clipping (after unscaling; set at most one)";
inline constexpr const char* kOptimizerGroup = "Optimizer";
inline constexpr const char* kLoopGroup = "Training loop";
inline constexpr const char* kOutputGroup = "Output and checkpoints";
inline constexpr const char* kWeightsGroup = "Weights (safetensors, PyTorch names and layouts)";
inline constexpr const char* kTestingGroup = "Testing";
inline constexpr const char* kDataGroup = "Your data (vkamp-train, vkamp-studio --train)";
inline constexpr const char* kLanguageModelGroup = "Language model (text, GPT size, sampling)";
inline constexpr const char* kFineTuneGroup = "Fine-tuning (model, text, LoRA)";
inline constexpr const char* kHelpGroups[] = {kGeneralGroup,  kDataGroup,      kLanguageModelGroup, kFineTuneGroup, kScalingGroup,
                                              kClippingGroup, kOptimizerGroup, kLoopGroup,          kOutputGroup,
                                              kWeightsGroup,  kTestingGroup};

}  // namespace vkamp::config
