// Errors: every failure in vkamp is a vkamp::Error with a readable message.
#pragma once
#include <stdexcept>
#include <string>
#include <vulkan/vulkan.h>

namespace vkamp {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

const char* vk_result_name(VkResult r);

[[noreturn]] void throw_vk_error(VkResult r, const char* what, const char* file, int line);

}  // namespace vkamp

// Wraps a Vulkan call; a failure throws vkamp::Error naming the call and result.
#define VKAMP_VK(call)                                                  \
  do {                                                                  \
    VkResult vkamp_r_ = (call);                                         \
    if (vkamp_r_ != VK_SUCCESS) ::vkamp::throw_vk_error(vkamp_r_, #call, __FILE__, __LINE__); \
  } while (0)
