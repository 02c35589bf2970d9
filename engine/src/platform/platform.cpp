#include "vkamp/platform.hpp"

#include <cstdio>
#include <cstdlib>
#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#endif

namespace vkamp::platform {
namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

std::string user_cache_dir() {
#ifdef _WIN32
  const std::string local = env_or_empty("LOCALAPPDATA");
  return local.empty() ? "" : local + "\\vkamp";
#else
  if (const std::string xdg = env_or_empty("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/vkamp";
  if (const std::string home = env_or_empty("HOME"); !home.empty()) return home + "/.cache/vkamp";
  return "";
#endif
}

void set_env(const char* name, const char* value) {
#ifdef _WIN32
  _putenv_s(name, value ? value : "");
#else
  if (value) setenv(name, value, 1);
  else unsetenv(name);
#endif
}

void binary_stdio() {
#ifdef _WIN32
  _setmode(_fileno(stdin), _O_BINARY);
  _setmode(_fileno(stdout), _O_BINARY);
#endif
}

}  // namespace vkamp::platform
