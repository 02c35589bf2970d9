#include "vkamp/error.hpp"

namespace vkamp {

const char* vk_result_name(VkResult r) {
  switch (r) {
#define CASE(x) case x: return #x;
    CASE(VK_SUCCESS) CASE(VK_NOT_READY) CASE(VK_TIMEOUT) CASE(VK_INCOMPLETE)
    CASE(VK_ERROR_OUT_OF_HOST_MEMORY) CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    CASE(VK_ERROR_INITIALIZATION_FAILED) CASE(VK_ERROR_DEVICE_LOST)
    CASE(VK_ERROR_MEMORY_MAP_FAILED) CASE(VK_ERROR_LAYER_NOT_PRESENT)
    CASE(VK_ERROR_EXTENSION_NOT_PRESENT) CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    CASE(VK_ERROR_INCOMPATIBLE_DRIVER) CASE(VK_ERROR_TOO_MANY_OBJECTS)
    CASE(VK_ERROR_FORMAT_NOT_SUPPORTED) CASE(VK_ERROR_FRAGMENTED_POOL)
    CASE(VK_ERROR_OUT_OF_POOL_MEMORY) CASE(VK_ERROR_INVALID_SHADER_NV)
    CASE(VK_ERROR_UNKNOWN)
#undef CASE
    default: return "VkResult(unknown)";
  }
}

void throw_vk_error(VkResult r, const char* what, const char* file, int line) {
  throw Error(std::string(what) + " failed: " + vk_result_name(r) + " (" + file + ":" +
              std::to_string(line) + ")");
}

}  // namespace vkamp
