// One command line for every binary (app/flags.hpp): each answers --help in
// the same layout and --version with the project version, both with exit
// status 0, and a misspelt flag with exit status 2 naming the closest flag.
// None of this touches the GPU. vkamp-studio does it all before opening a
// window: here it runs with no display, where a window would fail (exit 1).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/child_process.hpp"
#include "support/test_paths.hpp"

namespace vkamp::test {
namespace {

struct Binary {
  std::string name;     // as --version and --help name it
  std::string command;  // how to start it, with what comes before the flags
};

std::vector<Binary> binaries() {
  const std::string samples = VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/";
  std::vector<Binary> all;
  // VKAMP_SAMPLE_NAMES: samples/CMakeLists.txt's list, comma-separated.
  const std::string names = VKAMP_SAMPLE_NAMES;
  for (size_t start = 0; start < names.size();) {
    const size_t end = std::min(names.find(',', start), names.size());
    all.push_back({names.substr(start, end - start), samples + names.substr(start, end - start)});
    start = end + 1;
  }
#ifdef VKAMP_BENCH_DIR
  const std::string bench = VKAMP_TEST_DIR(VKAMP_BENCH_DIR) + "/";
  all.push_back({"vkamp-bench", bench + "vkamp-bench gemm"});
  all.push_back({"per-layer-scaling-bench", bench + "per-layer-scaling-bench"});
#endif
#ifdef VKAMP_STUDIO
  // No display: a window would fail, so these all end before one opens.
  all.push_back({"vkamp-studio", std::string("env -u DISPLAY -u WAYLAND_DISPLAY ") + VKAMP_STUDIO});
#endif
  return all;
}

ChildResult run(const Binary& b, const std::string& args) { return run_child(b.command + " " + args); }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(EveryCli, VersionPrintsTheProjectVersionAndExitsZero) {
  for (const Binary& b : binaries()) {
    SCOPED_TRACE(b.name);
    const ChildResult r = run(b, "--version");
    EXPECT_EQ(r.status, 0) << r.output;
    // "NAME 0.3.0" and, from a git checkout, " (git ...)".
    EXPECT_EQ(r.output.rfind(b.name + " " + VKAMP_PROJECT_VERSION, 0), 0u) << r.output;
    EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << "one line: " << r.output;
  }
}

TEST(EveryCli, HelpHasTheOneLayoutAndExitsZero) {
  for (const Binary& b : binaries()) {
    SCOPED_TRACE(b.name);
    const ChildResult r = run(b, "--help");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output.rfind("usage: " + b.name + " ", 0), 0u) << r.output;
    for (const char* part : {"\nOptions (FLAG VALUE and FLAG=VALUE both work):\n", "\nGeneral:\n",
                             "\n  -h, --help ", "\n  --version ", "\n  --device SEL "})
      EXPECT_TRUE(has(r.output, part)) << "no \"" << part << "\" in\n" << r.output;
    // Each flag once: a flag with two meanings would be parsed as one of them.
    std::vector<std::string> flags;
    for (size_t at = r.output.find("\n  --"); at != std::string::npos; at = r.output.find("\n  --", at + 1)) {
      const size_t end = r.output.find_first_of(" =\n", at + 3);
      flags.push_back(r.output.substr(at + 3, end - at - 3));
    }
    std::sort(flags.begin(), flags.end());
    const auto twice = std::adjacent_find(flags.begin(), flags.end());
    EXPECT_EQ(twice, flags.end()) << *twice << " is listed twice in\n" << r.output;
  }
}

TEST(EveryCli, MisspeltFlagExitsTwoNamingTheClosest) {
  for (const Binary& b : binaries()) {
    SCOPED_TRACE(b.name);
    const ChildResult r = run(b, "--devise 0");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_TRUE(has(r.output, "unknown flag '--devise' (did you mean --device?)")) << r.output;
    EXPECT_TRUE(has(r.output, "(see " + b.name + " --help)")) << r.output;
    const ChildResult inline_value = run(b, "--devise=0");
    EXPECT_EQ(inline_value.status, 2) << inline_value.output;
    EXPECT_TRUE(has(inline_value.output, "did you mean --device?")) << inline_value.output;
  }
}

// A flag's value is checked by its row, the same in every binary that shares it.
TEST(EveryCli, SharedRowsCheckTheirValues) {
  const std::string samples = VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/";
  for (const char* line : {"vkamp-predict --weights w.safetensors --data d.csv --batch 0", "vkamp-train --batch 0",
                           "fashion_mlp --batch 0", "vkamp-generate --weights w.safetensors --seed -1"}) {
    SCOPED_TRACE(line);
    const ChildResult r = run_child(samples + line);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_TRUE(has(r.output, "--batch") || has(r.output, "--seed")) << r.output;
  }
  const ChildResult p = run_child(samples + "vkamp-predict --weights w.safetensors --data d.csv --precision fp17");
  EXPECT_EQ(p.status, 2) << p.output;
  EXPECT_TRUE(has(p.output, "unknown precision 'fp17'")) << p.output;
}

#ifdef VKAMP_BENCH_DIR
TEST(EveryCli, BenchNamesTheBenchmarkAFlagBelongsTo) {
  const std::string bench = VKAMP_TEST_DIR(VKAMP_BENCH_DIR) + "/vkamp-bench";
  ChildResult r = run_child(bench + " conv --peer");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "--peer is an option of vkamp-bench gemm")) << r.output;
  r = run_child(bench + " --quick");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "no benchmark named")) << r.output;
  // Each benchmark's --help lists its own flags.
  r = run_child(bench + " generate --help");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r.output, "--size S ")) << r.output;
  EXPECT_FALSE(has(r.output, "--peer")) << r.output;
  // gemm --tune: its own rows, refused elsewhere and beside what it cannot take.
  r = run_child(bench + " reduce --tune");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "--tune is an option of vkamp-bench gemm")) << r.output;
  r = run_child(bench + " gemm --tune --formats fp32");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "--tune times fp16 kernels")) << r.output;
  r = run_child(bench + " gemm --tune --shapes 64x64");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "MxNxK")) << r.output;
  r = run_child(bench + " gemm --help");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r.output, "--tune") && has(r.output, "--max-tune-s S")) << r.output;
  r = run_child(VKAMP_TEST_DIR(VKAMP_BENCH_DIR) + "/per-layer-scaling-bench --depth x");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "--depth")) << r.output;
}
#endif

#ifdef VKAMP_BENCH_DIR
// vkamp-bench quant refuses what it cannot time before any device is made.
TEST(EveryCli, BenchQuantChecksItsFlags) {
  const std::string bench = VKAMP_TEST_DIR(VKAMP_BENCH_DIR) + "/vkamp-bench";
  ChildResult r = run_child(bench + " quant --help");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r.output, "--types LIST") && has(r.output, "--layer LIST")) << r.output;
  EXPECT_TRUE(has(r.output, "--tune") && has(r.output, "--max-tune-s S")) << r.output;
  EXPECT_FALSE(has(r.output, "--peer")) << r.output;
  r = run_child(bench + " quant --tune --paths GEMM_TILED=1");  // the sweep times every path itself
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "--tune times fp16 kernels")) << r.output;
  r = run_child(bench + " gemm --types q8_0");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "--types is an option of vkamp-bench quant")) << r.output;
  r = run_child(bench + " quant --types q8_0,iq2_xs");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "'iq2_xs' is not a block type")) << r.output;
  r = run_child(bench + " quant --types f16");  // a type, but not one in blocks
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "'f16' is not a block type")) << r.output;
  r = run_child(bench + " quant --forms forward,dw");  // a frozen W has no dW
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "--forms forward,dx")) << r.output;
  r = run_child(bench + " quant --layer 512x2048");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "TOKENSxINxOUT")) << r.output;
  r = run_child(bench + " quant --quick --layer 8x256x8");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "--quick picks layers")) << r.output;
  r = run_child(bench + " quant --layer 8x100x8 --types q4_k");  // 100 is no whole number of 256-value blocks
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "a row of 100 values is not whole q4_k blocks of 256")) << r.output;
}
#endif

#ifdef VKAMP_STUDIO
// A bad flag, --help and --version end before any window opens
// (no display here), and --help lists --report once.
TEST(EveryCli, StudioHandlesItsFlagsBeforeAnyWindow) {
  const std::string studio = std::string("env -u DISPLAY -u WAYLAND_DISPLAY ") + VKAMP_STUDIO;
  ChildResult r = run_child(studio + " --batch 0");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "--batch")) << r.output;
  r = run_child(studio + " --sample nosuch");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "fashion_mlp, lenet5, resnet, linreg")) << r.output;
  r = run_child(studio + " --frames 3 --screenshot shot.jpg");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "--screenshot needs a file name ending in .png")) << r.output;
  r = run_child(studio + " --sample charlm --temperature -1");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(has(r.output, "--temperature")) << r.output;
  r = run_child(studio + " --n-layer 2");  // fashion_mlp takes no language-model flag
  EXPECT_EQ(r.status, 2) << r.output;
  r = run_child(studio + " --help");
  EXPECT_EQ(r.status, 0) << r.output;
  const size_t first = r.output.find("--report");
  ASSERT_NE(first, std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("--report", first + 1), std::string::npos) << "--report listed twice:\n" << r.output;
  EXPECT_TRUE(has(r.output, "--size WxH ")) << r.output;
}
#endif

}  // namespace
}  // namespace vkamp::test
