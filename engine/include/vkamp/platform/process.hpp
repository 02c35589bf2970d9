// Starting a program as a child process without a shell: its arguments as
// a vector (no quoting, no word splitting), changes to its environment,
// where its standard input comes from, and everything it printed.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vkamp::platform {

struct ChildSpec {
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up in PATH
  // Variables to set (a value) or remove (nullopt) in the child only.
  std::vector<std::pair<std::string, std::optional<std::string>>> env;
  std::string stdin_path;   // empty: the null device
  std::string stderr_path;  // empty: stderr goes with stdout into `output`
  bool stderr_to_parent = false;  // true: stderr is this process's (stderr_path ignored)
  int timeout_s = 0;        // > 0: killed after this long (status 124, like timeout(1))
};

struct ChildOutcome {
  int status = -1;     // exit status; -1 when killed by a signal or not started
  std::string output;  // stdout (and stderr, unless redirected), bytes as written
};

ChildOutcome run_process(const ChildSpec& spec);

}  // namespace vkamp::platform
