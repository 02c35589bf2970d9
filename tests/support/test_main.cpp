// Test main: sets up a quiet lavapipe, creates the shared Context with the
// Khronos validation layer on, and fails the run if the layer reports
// anything, including leaked objects when the device is destroyed.
//
//   --vkamp_variant=NAME   run a path variant (path_variants.hpp): its
//                          context options and its filter (an explicit
//                          --gtest_filter then picks among all tests)
//   --vkamp_list_variants  print the binary's variants, one a line:
//                          NAME<tab>VAR=value|...<tab>COST<tab>LABEL

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "support/path_variants.hpp"
#include "vkamp/error.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::test {
namespace {
std::unique_ptr<Context> g_ctx;
Context* g_current = nullptr;  // g_ctx, or one of g_by_paths inside a UsePaths scope
// The contexts UsePaths made, by the paths they run.
std::vector<std::unique_ptr<Context>> g_by_paths;
std::string g_no_device;  // why there is no usable context (or not the one asked for): every GPU test fails
std::string g_skip_all;   // why every GPU test skips
const PathVariant* g_variant = nullptr;  // --vkamp_variant's

// Whether the environment sets `name` to `value` (read through the platform layer).
bool env_is(const char* name, const char* value) { return vkamp::platform::get_env(name) == value; }

bool no_device_allowed() { return env_is("VKAMP_ALLOW_NO_DEVICE", "1"); }

// The layer is on unless VKAMP_TEST_VALIDATION=0 says the machine has none
// (a Windows user without the Vulkan SDK: the package's run-tests.cmd).
bool validate() { return !env_is("VKAMP_TEST_VALIDATION", "0"); }

// A variant that runs lavapipe at `lanes` (LP_NATIVE_VECTOR_WIDTH, set
// from its env): LP_NATIVE_VECTOR_WIDTH means nothing to another driver,
// which keeps its own subgroup size, so there every test skips, saying so
// on stdout (ctest's SKIP_REGULAR_EXPRESSION for these entries, from
// GroupGTestCases.cmake, reads it). On lavapipe at any other size the
// variable did not reach the driver, or this Mesa reads it differently:
// every test fails rather than passing at the default size unsaid.
void check_lanes(const DeviceInfo& d, uint32_t lanes) {
  if (d.driver.rfind("llvmpipe", 0) != 0) {
    g_skip_all = "the subgroup-size variants set lavapipe's LP_NATIVE_VECTOR_WIDTH; \"" + d.name + "\" (" + d.driver +
                 ") is not lavapipe and keeps its own " + std::to_string(d.subgroup_size) + " lanes";
    std::printf("vkamp: skipped on this device: %s\n", g_skip_all.c_str());
    return;
  }
  if (d.subgroup_size != lanes)
    g_no_device = "this variant needs lavapipe at " + std::to_string(lanes) + " lanes (LP_NATIVE_VECTOR_WIDTH=" +
                  std::to_string(lanes * 32) + "); \"" + d.name + "\" reports " + std::to_string(d.subgroup_size);
}

// Without a usable device every GPU test fails with this one message (a
// broken driver must not read as a passing suite), unless the user opts
// out: then the whole process skips, as before.
class ContextEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ContextOptions opt;
    opt.validation = validate();
    if (g_variant) {
      opt.paths = g_variant->paths;
      opt.fp16_storage_only = g_variant->fp16_storage_only;
      opt.inf_nan_preserve = g_variant->inf_nan_preserve;
    }
    try {
      g_ctx = std::make_unique<Context>(opt);
      g_current = g_ctx.get();
    } catch (const Error& e) {
      // Tensor cores asked for where the device has none (the variants
      // that check them, run on a machine without): skip, saying why.
      if (opt.paths.or_else(kernel_paths_from_env()).gemm_mma == GemmMma::coopmat) {
        opt.paths.gemm_mma = GemmMma::off;
        try {
          g_ctx = std::make_unique<Context>(opt);
          g_current = g_ctx.get();
          g_skip_all = e.what();
          return;
        } catch (const Error&) {
        }
      }
      g_no_device = std::string("no usable Vulkan device: ") + e.what() +
                    " (VKAMP_ALLOW_NO_DEVICE=1 skips the GPU tests instead)";
      if (no_device_allowed()) GTEST_SKIP() << g_no_device;
      return;
    }
    if (g_variant && g_variant->lavapipe_lanes) check_lanes(g_ctx->info(), g_variant->lavapipe_lanes);
  }
  void TearDown() override {
    if (!g_ctx) return;  // the loader's complaints about no driver are not validation messages
    g_by_paths.clear();
    g_ctx.reset();
    EXPECT_EQ(validation_message_count(), 0u)
        << "the validation layer reported messages (leaks are reported at device destruction)";
  }
};
}  // namespace

Context& ctx() {
  if (!g_current) throw Error(g_no_device.empty() ? "no test context" : g_no_device);
  return *g_current;
}

UsePaths::UsePaths(const KernelPaths& paths) : previous_(&ctx()) {
  const KernelPaths want = paths.or_else(previous_->paths());
  if (want == g_ctx->paths()) {
    g_current = g_ctx.get();
    return;
  }
  for (const auto& c : g_by_paths)
    if (c->paths() == want) {
      g_current = c.get();
      return;
    }
  ContextOptions opt;
  opt.device = std::to_string(g_ctx->info().index);
  opt.validation = validate();
  opt.fp16_storage_only = g_ctx->path() == PrecisionPath::Fp16Storage;
  if (g_variant) opt.inf_nan_preserve = g_variant->inf_nan_preserve;
  opt.paths = want;
  g_by_paths.push_back(std::make_unique<Context>(opt));
  g_current = g_by_paths.back().get();
}

UsePaths::~UsePaths() { g_current = previous_; }

const std::string& no_device_reason() { return g_no_device; }
const std::string& skip_all_reason() { return g_skip_all; }

}  // namespace vkamp::test

namespace {

// Takes the test main's own flags out of argv; false on a bad one.
bool read_own_flags(int& argc, char** argv, bool& list_variants) {
  using vkamp::test::g_variant;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--vkamp_list_variants") {
      list_variants = true;
    } else if (arg.rfind("--vkamp_variant=", 0) == 0) {
      const std::string name = arg.substr(16);
      g_variant = vkamp::test::find_path_variant(name);
      if (!g_variant) {
        std::fprintf(stderr, "no path variant named \"%s\" (--vkamp_list_variants lists them)\n", name.c_str());
        return false;
      }
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  argv[argc] = nullptr;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  bool list_variants = false;
  if (!read_own_flags(argc, argv, list_variants)) return 2;
  if (list_variants) {
    for (const vkamp::test::PathVariant& v : vkamp::test::path_variants()) {
      std::string env;
      for (const std::string& e : v.env) env += (env.empty() ? "" : "|") + e;
      std::printf("%s\t%s\t%d\t%s\n", v.name.c_str(), env.c_str(), v.cost, v.label.c_str());
    }
    return 0;
  }
  // The variant's driver and layer variables, before anything loads them.
  if (const vkamp::test::PathVariant* v = vkamp::test::g_variant)
    for (const std::string& e : v->env) {
      const size_t eq = e.find('=');
      vkamp::platform::set_env(e.substr(0, eq).c_str(), e.substr(eq + 1).c_str());
    }
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
  // the passes (tests/shaders/path_variants.cpp, row_group_path). It is the
  // same IEEE arithmetic either way.
  if (!vkamp::platform::get_env("GALLIVM_PERF")) vkamp::platform::set_env("GALLIVM_PERF", "nopt");
  if (vkamp::test::g_variant) GTEST_FLAG_SET(filter, vkamp::test::g_variant->filter);
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new vkamp::test::ContextEnvironment);
  const int rc = RUN_ALL_TESTS();
  // A filter that matches nothing (a renamed test, a ctest entry's stale
  // pattern) must not pass as an empty success.
  if (!GTEST_FLAG_GET(list_tests) && ::testing::UnitTest::GetInstance()->test_to_run_count() == 0) {
    std::fprintf(stderr, "no test matches the filter \"%s\": an entry that runs nothing fails\n",
                 GTEST_FLAG_GET(filter).c_str());
    return 1;
  }
  return rc;
}
