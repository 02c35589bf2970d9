// Every environment variable vkamp reads, in one table (knobs.cpp): its
// name, the values it takes, its default, what it is for and which layer
// reads it. Readers go through env_knob() and the typed helpers below,
// which refuse a name the table lacks: a variable cannot be read without
// being listed, and vkamp-info --knobs prints the list.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vkamp {

struct EnvKnob {
  const char* name;
  std::vector<std::string> choices;  // the values it takes; empty: free-form, described by `values`
  const char* values;                // how a free-form value looks ("RxC", "a file"); "" with choices
  const char* fallback;              // what applies while it is unset, in words
  const char* reader;                // the layer that reads it: engine, samples, tests, scripts
  const char* purpose;               // one line

  bool test_only() const;            // read by the tests alone
  std::string values_text() const;   // "0 | 1 | emulate", or `values`
};

// The table, in the order vkamp-info --knobs prints it.
const std::vector<EnvKnob>& env_knobs();

// The row of `name`; a name the table lacks is a programming error (std::logic_error).
const EnvKnob& env_knob_row(const char* name);

// The variable's value while it is set (possibly empty), after checking
// that the table lists it.
std::optional<std::string> env_knob(const char* name);

// Set and not empty: an empty variable counts as unset (VKAMP_DEVICE=, a path).
std::optional<std::string> env_text(const char* name);

// A 0/1 switch: unset or empty gives `fallback`, "0" false, any other value true.
bool env_switch(const char* name, bool fallback);

// One of the row's choices; unset or empty gives the row's default. Any
// other value throws vkamp::ConfigError naming the variable and its values.
std::string env_choice(const char* name);
// `value` where it is one of the row's choices; else the same ConfigError.
std::string knob_choice(const char* name, const std::string& value);

// A value of the form "RxC" (VKAMP_ATTENTION_TILES, vkamp-bench attention
// --tiles): two whole numbers above 0 joined by 'x', nothing after them;
// nullopt for anything else.
std::optional<std::pair<uint32_t, uint32_t>> parse_dims(const std::string& text);

// Sets (or, with nullptr, unsets) a variable for its lifetime and restores
// what was there: tests of how the environment is read. Kernel paths are
// chosen by making a Context with them (KernelPaths), never this way.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace vkamp
