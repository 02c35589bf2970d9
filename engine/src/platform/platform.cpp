#include "vkamp/platform.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <system_error>
#include <vector>
#ifdef _WIN32
#include <fcntl.h>
#include <io.h>

#include "wide.hpp"
// after windows.h, which wide.hpp includes
#include <shellapi.h>
#else
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace vkamp::platform {

std::optional<std::string> get_env(const char* name) {
#ifdef _WIN32
  const wchar_t* v = _wgetenv(widen(name).c_str());
  if (!v) return std::nullopt;
  return narrow(v);
#else
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string(v);
#endif
}

void set_env(const char* name, const char* value) {
#ifdef _WIN32
  _wputenv_s(widen(name).c_str(), value ? widen(value).c_str() : L"");
#else
  if (value) setenv(name, value, 1);
  else unsetenv(name);
#endif
}

std::string user_cache_dir() {
  auto nonempty = [](const char* name) { return get_env(name).value_or(""); };
#ifdef _WIN32
  const std::string local = nonempty("LOCALAPPDATA");
  return local.empty() ? "" : local + "\\vkamp";
#else
  if (const std::string xdg = nonempty("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/vkamp";
  if (const std::string home = nonempty("HOME"); !home.empty()) return home + "/.cache/vkamp";
  return "";
#endif
}

void utf8_arguments(int& argc, char**& argv) {
#ifdef _WIN32
  int n = 0;
  wchar_t** wide = CommandLineToArgvW(GetCommandLineW(), &n);
  if (!wide) return;
  static std::vector<std::string> text;
  static std::vector<char*> pointers;
  text.clear();
  for (int i = 0; i < n; ++i) text.push_back(narrow(wide[i]));
  LocalFree(wide);
  pointers.clear();
  for (std::string& t : text) pointers.push_back(t.data());
  pointers.push_back(nullptr);
  argc = n;
  argv = pointers.data();
#else
  (void)argc;
  (void)argv;
#endif
}

const char* cache_home_variable() {
#ifdef _WIN32
  return "LOCALAPPDATA";
#else
  return "XDG_CACHE_HOME";
#endif
}

void binary_stdio() {
#ifdef _WIN32
  _setmode(_fileno(stdin), _O_BINARY);
  _setmode(_fileno(stdout), _O_BINARY);
#endif
}

std::filesystem::path path_from_utf8(const std::string& utf8) {
  return std::filesystem::path(std::u8string(reinterpret_cast<const char8_t*>(utf8.data()), utf8.size()));
}

std::string utf8_from_path(const std::filesystem::path& path) {
  const std::u8string u = path.u8string();
  return std::string(reinterpret_cast<const char*>(u.data()), u.size());
}

std::string temp_dir() { return utf8_from_path(std::filesystem::temp_directory_path()); }

std::string make_temp_dir(const std::string& prefix) {
  // create_directory is atomic and says whether it made the folder, which
  // is what mkdtemp does, on every system.
  static const char kLetters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::mt19937_64 gen((uint64_t(rd()) << 32) ^ uint64_t(rd()) ^ uint64_t(process_id()));
  const std::filesystem::path base = std::filesystem::temp_directory_path();
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = prefix + "-";
    for (int i = 0; i < 6; ++i) name += kLetters[gen() % (sizeof(kLetters) - 1)];
    const std::filesystem::path dir = base / path_from_utf8(name);
    std::error_code ec;
    if (std::filesystem::create_directory(dir, ec)) return utf8_from_path(dir);
    if (ec) throw std::runtime_error("cannot create a folder in " + utf8_from_path(base) + ": " + ec.message());
  }
  throw std::runtime_error("cannot find a free folder name in " + utf8_from_path(base));
}

const char* null_device() {
#ifdef _WIN32
  return "NUL";
#else
  return "/dev/null";
#endif
}

std::tm local_time_now() {
  const std::time_t t = std::time(nullptr);
  std::tm out{};
#ifdef _WIN32
  localtime_s(&out, &t);
#else
  localtime_r(&t, &out);
#endif
  return out;
}

long process_id() {
#ifdef _WIN32
  return long(GetCurrentProcessId());
#else
  return long(getpid());
#endif
}

bool is_terminal(std::FILE* stream) {
#ifdef _WIN32
  return _isatty(_fileno(stream)) != 0;
#else
  return isatty(fileno(stream)) != 0;
#endif
}

bool can_write_into(const std::string& dir, std::string* why) {
#ifdef _WIN32
  const bool ok = _waccess(widen(dir).c_str(), 2) == 0;
#else
  const bool ok = access(dir.c_str(), W_OK) == 0;
#endif
  if (!ok && why) *why = std::strerror(errno);
  return ok;
}

bool permission_bits_bind() {
#ifdef _WIN32
  return false;
#else
  return geteuid() != 0;
#endif
}

std::string shared_data_dir() {
  // A runner may name the folder: the Windows tests under Wine take the host's /usr/share.
  if (const std::string named = get_env("VKAMP_SHARED_DATA_DIR").value_or(""); !named.empty()) return named;
#ifdef _WIN32
  std::wstring exe(32768, L'\0');
  exe.resize(GetModuleFileNameW(nullptr, exe.data(), DWORD(exe.size())));
  return utf8_from_path(std::filesystem::path(exe).parent_path());
#else
  return "/usr/share";
#endif
}

std::optional<std::string> folder_refusing_new_files() {
  std::error_code ec;
  if (!running_on_windows() && std::filesystem::is_directory("/proc/self", ec)) return "/proc";
  return std::nullopt;
}

bool running_on_windows() {
#ifdef _WIN32
  return true;
#else
  return false;
#endif
}

std::string python_interpreter() {
#ifdef _WIN32
  return "python";
#else
  return "/usr/bin/python3";
#endif
}

void ensure_runtime_dir() {
#ifndef _WIN32
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg && *xdg && access(xdg, W_OK) == 0) return;
  const std::string dir = "/tmp/vkamp-xdg-" + std::to_string(getuid());
  mkdir(dir.c_str(), 0700);
  setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
#endif
}

}  // namespace vkamp::platform
