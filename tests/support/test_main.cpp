// Test main: sets up a quiet lavapipe, creates the shared Context with the
// Khronos validation layer on, and fails the run if the layer reports
// anything, including leaked objects when the device is destroyed.

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "gpu_test.hpp"
#include "vkamp/error.hpp"

namespace vkamp::test {
namespace {
std::unique_ptr<Context> g_ctx;
std::string g_no_device;  // why there is no context
std::string g_skip_all;   // why every GPU test skips

bool no_device_allowed() {
  const char* v = std::getenv("VKAMP_ALLOW_NO_DEVICE");
  return v && std::string(v) == "1";
}

// Without a usable device every GPU test fails with this one message (a
// broken driver must not read as a passing suite), unless the user opts
// out: then the whole process skips, as before.
class ContextEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ContextOptions opt;
    opt.validation = true;
    try {
      g_ctx = std::make_unique<Context>(opt);
    } catch (const Error& e) {
      // VKAMP_COOPMAT=1 or khr where the device has no tensor cores (the
      // variants that check them, run on a machine without): skip, saying why.
      const char* mma = std::getenv("VKAMP_COOPMAT");
      if (mma && (std::string(mma) == "1" || std::string(mma) == "khr")) {
        opt.gemm_mma = GemmMma::off;
        try {
          g_ctx = std::make_unique<Context>(opt);
          g_skip_all = e.what();
          return;
        } catch (const Error&) {
        }
      }
      g_no_device = std::string("no usable Vulkan device: ") + e.what() +
                    " (VKAMP_ALLOW_NO_DEVICE=1 skips the GPU tests instead)";
      if (no_device_allowed()) GTEST_SKIP() << g_no_device;
    }
  }
  void TearDown() override {
    if (!g_ctx) return;  // the loader's complaints about no driver are not validation messages
    g_ctx.reset();
    EXPECT_EQ(validation_message_count(), 0u)
        << "the validation layer reported messages (leaks are reported at device destruction)";
  }
};
}  // namespace

Context& ctx() {
  if (!g_ctx) throw Error(g_no_device.empty() ? "no test context" : g_no_device);
  return *g_ctx;
}

const std::string& no_device_reason() { return g_no_device; }
const std::string& skip_all_reason() { return g_skip_all; }

}  // namespace vkamp::test

int main(int argc, char** argv) {
  vkamp::ensure_runtime_dir();  // lavapipe complains on stderr without one
  // lavapipe's LLVM compiles without its optimization passes unless
  // GALLIVM_PERF is set (even empty); other drivers ignore the variable, and
  // the programs the tests start inherit it. Compiling pipelines is most of
  // the suite's time on lavapipe, and it measured faster everywhere but where
  // a test runs more than it compiles (cold, one process each, 2 cores): the
  // GEMM's cb16 tests 87.7 -> 57.9 s, its tiled path 36.2 -> 25.5,
  // attention at GPU tiles 24.1 -> 16.3, the other fp32 shader tests 25.7 ->
  // 19.6, test_graph 34.5 -> 20.1, test_golden 39.3 -> 31.9, test_training
  // 69.0 -> 60.5, the samples' cases 65.2 -> 51.8, the emulated tensor-core
  // GEMM 67.8 -> 61.8; the row kernels' group path 18.4 -> 22.0, which keeps
  // the passes (tests/CMakeLists.txt, shaders_row_group_path_*). It is the
  // same IEEE arithmetic either way.
  setenv("GALLIVM_PERF", "nopt", 0);
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new vkamp::test::ContextEnvironment);
  return RUN_ALL_TESTS();
}
