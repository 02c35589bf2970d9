// The Vulkan instance, with the Khronos validation layer when asked for.
// Validation messages of warning or error severity go to a callback that
// counts them process-wide (tests fail on any) and prints them to stderr.
#pragma once
#include <cstdint>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkamp {

// Points XDG_RUNTIME_DIR at a private /tmp directory when it is unset or
// unwritable: Mesa's lavapipe complains on stderr otherwise. Instance's
// constructor calls it; it is idempotent.
void ensure_runtime_dir();

// True when VKAMP_VALIDATION is set to something other than "0".
bool validation_requested_by_env();

// Warning- and error-severity messages seen by any Instance in this process.
uint64_t validation_message_count();

class Instance {
 public:
  // validation = true loads VK_LAYER_KHRONOS_validation, or throws if absent.
  // extra_extensions: e.g. the surface extensions a window needs.
  explicit Instance(bool validation, const std::vector<const char*>& extra_extensions = {});
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  bool validation() const { return messenger_ != VK_NULL_HANDLE; }
  std::vector<VkPhysicalDevice> physical_devices() const;

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
};

}  // namespace vkamp
