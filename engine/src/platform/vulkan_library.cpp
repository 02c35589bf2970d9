// The Vulkan loader, opened at run time on the first Vulkan call: the
// forwarders written by cmake/VulkanForwarders.cmake ask here for each
// entry point. Where there is no loader the program says so and exits 1,
// which a program linked to the loader cannot do (it fails to start).
#include <cstdio>
#include <cstdlib>
#include <string>
#ifdef _WIN32
#include <windows.h>

#include "wide.hpp"
#else
#include <dlfcn.h>
#endif

#include "vkamp/platform.hpp"

namespace vkamp::platform {
namespace {

#ifdef _WIN32
constexpr const char* kLoader = "vulkan-1.dll";
#else
constexpr const char* kLoader = "libvulkan.so.1";
#endif

[[noreturn]] void no_loader(const std::string& name, const std::string& why) {
  std::fprintf(stderr,
               "vkamp: cannot load the Vulkan loader %s (%s). Install your GPU's driver, or Mesa's "
               "lavapipe for the CPU.\n",
               name.c_str(), why.c_str());
  std::exit(1);
}

void* open_loader() {
  // VKAMP_VULKAN_LOADER names another loader (a test takes a missing one).
  const std::string name = get_env("VKAMP_VULKAN_LOADER").value_or(kLoader);
#ifdef _WIN32
  HMODULE lib = LoadLibraryW(widen(name).c_str());
  if (!lib) no_loader(name, error_text(GetLastError()));
  return reinterpret_cast<void*>(lib);
#else
  void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) no_loader(name, dlerror());
  return lib;
#endif
}

void* find(void* lib, const char* name) {
#ifdef _WIN32
  return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(lib), name));
#else
  return dlsym(lib, name);
#endif
}

}  // namespace

void* vulkan_symbol(const char* name) {
  static void* const lib = open_loader();
  if (void* f = find(lib, name)) return f;
  // What the loader does not export (extensions) it may still hand out.
  using GetProc = void* (*)(void*, const char*);
  static const auto get_proc = reinterpret_cast<GetProc>(find(lib, "vkGetInstanceProcAddr"));
  if (void* f = get_proc ? get_proc(nullptr, name) : nullptr) return f;
  std::fprintf(stderr, "vkamp: the Vulkan loader %s has no %s\n", kLoader, name);
  std::exit(1);
}

}  // namespace vkamp::platform
