// What the tests of vkamp-train and vkamp-predict share: running a tool as
// a user does (with the validation layer on), and reading a number off its
// output.
#pragma once
#include <cstdint>
#include <fstream>
#include <random>
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

// A CSV of `rows` rows, 4 normal features and a label column "kind" (0, 1
// or 2: the arg-max of a fixed linear map), drawn from `seed`.
inline void write_linear_table(const std::string& path, int rows, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> n;
  const double w[3][4] = {{1, -2, 0.5, 1}, {-1, 1, 2, 0}, {0.5, 0.5, -1, -2}};
  std::ofstream f(path);
  f << "a,b,c,d,kind\n";
  for (int r = 0; r < rows; ++r) {
    double x[4], top = -1e300;
    int best = 0;
    for (double& e : x) e = n(gen);
    for (int c = 0; c < 3; ++c) {
      const double s = w[c][0] * x[0] + w[c][1] * x[1] + w[c][2] * x[2] + w[c][3] * x[3];
      if (s > top) top = s, best = c;
    }
    f << x[0] << "," << x[1] << "," << x[2] << "," << x[3] << "," << best << "\n";
  }
}

}  // namespace vkamp::test
