// What the tests of vkamp-train and vkamp-predict share: running a tool as
// a user does (with the validation layer on), and reading a number off its
// output.
#pragma once
#include <sstream>
#include <string>

#include "support/child_process.hpp"
#include "support/test_paths.hpp"

namespace vkamp::test {

inline ChildResult run_tool(const char* tool, const std::string& args) {
  return run_child("VKAMP_VALIDATION=1 " + VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/" + tool + " " + args);
}

// The number after `prefix` in the output ("held-out accuracy 93.40%" -> "93.40").
inline std::string number_after(const std::string& out, const std::string& prefix) {
  const size_t at = out.find(prefix);
  if (at == std::string::npos) return "";
  std::istringstream in(out.substr(at + prefix.size()));
  std::string v;
  in >> v;
  while (!v.empty() && (v.back() == '%' || v.back() == ',')) v.pop_back();
  return v;
}

}  // namespace vkamp::test
