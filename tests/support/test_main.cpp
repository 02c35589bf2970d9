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

class ContextEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ContextOptions opt;
    opt.validation = true;
    try {
      g_ctx = std::make_unique<Context>(opt);
    } catch (const Error& e) {
      FAIL() << "cannot create the Vulkan context: " << e.what();
    }
  }
  void TearDown() override {
    g_ctx.reset();
    EXPECT_EQ(validation_message_count(), 0u)
        << "the validation layer reported messages (leaks are reported at device destruction)";
  }
};
}  // namespace

Context& ctx() {
  if (!g_ctx) throw Error("no test context (its creation failed; see the first failure)");
  return *g_ctx;
}

}  // namespace vkamp::test

int main(int argc, char** argv) {
  vkamp::ensure_runtime_dir();  // lavapipe complains on stderr without one
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new vkamp::test::ContextEnvironment);
  return RUN_ALL_TESTS();
}
