// Running a binary as a child process for the CLI and app tests: its exit
// status and everything it printed (stdout and stderr together).
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace vkamp::test {

struct ChildResult {
  int status = -1;  // exit status, or -1 if it was killed by a signal
  std::string output;
};

// `command` runs through /bin/sh with 2>&1 appended.
inline ChildResult run_child(const std::string& command) {
  ChildResult r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace vkamp::test
