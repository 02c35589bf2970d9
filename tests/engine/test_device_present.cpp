// The ctest fixture every GPU test requires (tests/CMakeLists.txt): with no
// usable Vulkan device the suite fails here, with one message, and ctest
// lists the GPU tests as not run. VKAMP_ALLOW_NO_DEVICE=1 skips instead.
#include <cstdio>

#include "support/gpu_test.hpp"

namespace vkamp::test {

TEST(Device, IsUsable) {
  if (!no_device_reason().empty()) FAIL() << no_device_reason();
  const DeviceInfo& d = ctx().info();
  std::printf("device: %s (%s), %s\n", d.name.c_str(), d.driver.c_str(), precision_path_name(ctx().path()));
}

}  // namespace vkamp::test
