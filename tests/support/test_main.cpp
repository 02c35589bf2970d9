// Test main: sets up a quiet lavapipe, creates the shared Context with the
// Khronos validation layer on, and fails the run if the layer reports
// anything, including leaked objects when the device is destroyed.
#include <sys/stat.h>
#include <unistd.h>

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
  // lavapipe complains on stderr without a private runtime directory.
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (!xdg || access(xdg, W_OK) != 0) {
    std::string dir = "/tmp/vkamp-xdg-" + std::to_string(getuid());
    mkdir(dir.c_str(), 0700);
    setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
  }
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new vkamp::test::ContextEnvironment);
  return RUN_ALL_TESTS();
}
