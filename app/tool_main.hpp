// What the programs share at their top: which exit status an error means,
// and the rest of main() of a tool that is not a training run
// (vkamp-predict, vkamp-generate), once its flags are parsed
// (app/flags.hpp).
#pragma once
#include <exception>
#include <functional>

namespace vkamp::app {

// 2 for bad input (flags, config, data, checkpoint or weights files),
// 1 for anything else (a runtime failure).
int exit_status(const std::exception& e);

// Returns run()'s status; an error from run() is printed as "NAME: why"
// ("NAME: error: why" for a runtime failure) with exit_status()'s status.
int tool_main(const char* name, const std::function<int()>& run);

}  // namespace vkamp::app
