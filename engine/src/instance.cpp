#include "vkamp/instance.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "vkamp/error.hpp"
#include "vkamp/knobs.hpp"
#include "vkamp/platform.hpp"

namespace vkamp {
namespace {

std::atomic<uint64_t> g_validation_messages{0};

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  g_validation_messages.fetch_add(1);
  const char* level = severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning";
  std::fprintf(stderr, "vkamp: validation %s: %s\n", level, data && data->pMessage ? data->pMessage : "");
  return VK_FALSE;
}

bool has_layer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

bool has_instance_extension(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateInstanceExtensionProperties(nullptr, &n, exts.data());
  for (auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

}  // namespace

void ensure_runtime_dir() { platform::ensure_runtime_dir(); }

bool validation_requested_by_env() {
  return env_switch("VKAMP_VALIDATION", false);
}

uint64_t validation_message_count() { return g_validation_messages.load(); }

Instance::Instance(bool validation, const std::vector<const char*>& extra_extensions) {
  ensure_runtime_dir();
  const char* kLayer = "VK_LAYER_KHRONOS_validation";
  std::vector<const char*> layers, extensions = extra_extensions;
  if (validation) {
    // Under Wine the host's loader adds the layer (scripts/wine-run.sh sets
    // VK_INSTANCE_LAYERS and says so here), and the Windows process cannot
    // list it: its messages still come through debug utils.
    if (!env_switch("VKAMP_HOST_VALIDATION", false)) {
      if (!has_layer(kLayer))
        throw Error("validation was requested but VK_LAYER_KHRONOS_validation is not installed "
                    "(Debian: apt-get install vulkan-validationlayers)");
      layers.push_back(kLayer);
    }
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  VkInstanceCreateFlags flags = 0;
  // MoltenVK and other non-conformant drivers only show up with this.
  if (has_instance_extension(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkamp";
  app.pEngineName = "vkamp";
  app.apiVersion = VK_API_VERSION_1_2;

  VkDebugUtilsMessengerCreateInfoEXT dbg{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  dbg.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                        VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  dbg.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  dbg.pfnUserCallback = on_validation_message;

  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pNext = validation ? &dbg : nullptr;  // also catches create/destroy messages
  ci.flags = flags;
  ci.pApplicationInfo = &app;
  ci.enabledLayerCount = uint32_t(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  ci.enabledExtensionCount = uint32_t(extensions.size());
  ci.ppEnabledExtensionNames = extensions.data();
  VkResult r = vkCreateInstance(&ci, nullptr, &instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
    throw Error("no Vulkan driver found (Debian: apt-get install mesa-vulkan-drivers for the "
                "lavapipe CPU driver)");
  VKAMP_VK(r);

  if (validation) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (!create) {
      vkDestroyInstance(instance_, nullptr);
      throw Error("VK_EXT_debug_utils is missing: cannot receive validation messages");
    }
    VkResult rm = create(instance_, &dbg, nullptr, &messenger_);
    if (rm != VK_SUCCESS) {
      vkDestroyInstance(instance_, nullptr);
      throw_vk_error(rm, "vkCreateDebugUtilsMessengerEXT", __FILE__, __LINE__);
    }
  }
}

Instance::~Instance() {
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

std::vector<VkPhysicalDevice> Instance::physical_devices() const {
  uint32_t n = 0;
  VKAMP_VK(vkEnumeratePhysicalDevices(instance_, &n, nullptr));
  std::vector<VkPhysicalDevice> devs(n);
  VKAMP_VK(vkEnumeratePhysicalDevices(instance_, &n, devs.data()));
  devs.resize(n);
  return devs;
}

}  // namespace vkamp
