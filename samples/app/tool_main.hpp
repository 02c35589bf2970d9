// What the programs share at their top: which exit status an error means,
// and the whole main() of a tool that is not a training run
// (vkamp-predict, vkamp-generate).
#pragma once
#include <exception>
#include <functional>

namespace vkamp::app {

// 2 for bad input (flags, config, data, checkpoint or weights files),
// 1 for anything else (a runtime failure).
int exit_status(const std::exception& e);

// Parses the flags (`parse` returns true for --help, and throws ConfigError
// for a bad flag: "NAME: why", "(see NAME --help)", exit 2), prints `usage`
// for --help, then returns run()'s status; an error from run() is printed
// as "NAME: why" ("NAME: error: why" for a runtime failure) with
// exit_status()'s status.
int tool_main(const char* name, const char* usage, const std::function<bool()>& parse,
              const std::function<int()>& run);

}  // namespace vkamp::app
