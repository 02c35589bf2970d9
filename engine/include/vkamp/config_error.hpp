// The error for bad user input (a flag, a setting, a model string or
// model file): the message names what is wrong, and binaries print it and
// exit with status 2. It lives below every layer that parses input (graph,
// training settings), so none of them depends on another for it.
#pragma once
#include <exception>
#include <string>
#include <utility>

namespace vkamp {

// A bad value, unknown key, or conflicting options: the message names the
// flag or key; binaries print it and exit with status 2.
class ConfigError : public std::exception {
 public:
  explicit ConfigError(std::string msg) : msg_(std::move(msg)) {}
  const char* what() const noexcept override { return msg_.c_str(); }

 private:
  std::string msg_;
};

}  // namespace vkamp
