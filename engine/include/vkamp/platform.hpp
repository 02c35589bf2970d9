// The platform layer: what differs between operating systems, behind one
// interface, so that no other file names an OS macro or a POSIX-only call.
// Paths are UTF-8 std::strings in every interface. Files, child processes
// and the Vulkan loader have headers of their own in vkamp/platform/.
#pragma once
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>

namespace vkamp::platform {

// vkamp's folder of per-user caches (pipelines, GEMM tunings):
// $XDG_CACHE_HOME/vkamp, else ~/.cache/vkamp on Linux; %LOCALAPPDATA%\vkamp
// on Windows. Empty where the variables it is made from are unset.
std::string user_cache_dir();

// The variable user_cache_dir() starts from: XDG_CACHE_HOME, or LOCALAPPDATA.
const char* cache_home_variable();

// An environment variable of this process as UTF-8; nullopt when unset.
std::optional<std::string> get_env(const char* name);

// Sets (value non-null) or removes an environment variable of this process.
void set_env(const char* name, const char* value);

// The program's arguments as UTF-8: on Windows main() gets them in the
// ANSI code page, so this replaces argv with the command line's own text
// (CommandLineToArgvW). Every main calls it first.
void utf8_arguments(int& argc, char**& argv);

// Standard input and output as bytes: no CRLF translation on Windows
// (a program that reads and writes UTF-8 text line by line).
void binary_stdio();

// A UTF-8 string as a path, and back. A MinGW path made from a std::string
// reads it in the ANSI code page, so every conversion goes through these.
std::filesystem::path path_from_utf8(const std::string& utf8);
std::string utf8_from_path(const std::filesystem::path& path);

// The system's folder for temporary files (UTF-8).
std::string temp_dir();

// Makes a fresh folder "<temp_dir>/<prefix>-XXXXXX", unique across
// processes, and returns its path. Throws std::runtime_error on failure.
std::string make_temp_dir(const std::string& prefix);

// The file that swallows what is written to it: /dev/null, or NUL.
const char* null_device();

// This process's id, for names unique among running processes.
long process_id();

// Whether the stream is an interactive terminal (progress bars).
bool is_terminal(std::FILE* stream);

// Whether this process may create files in `dir` (UTF-8); where not, `why`
// (if given) gets the reason.
bool can_write_into(const std::string& dir, std::string* why = nullptr);

// Whether a folder's permission bits stop this process writing into it:
// not for root, and not on Windows (a folder there has no write bit).
bool permission_bits_bind();

// A folder in which no process, root or not, may create a file (Linux's
// /proc); nullopt where the system has none.
std::optional<std::string> folder_refusing_new_files();

// Where the system keeps data that programs share: /usr/share on Linux
// (Debian's dataset-fashion-mnist, fortunes); on Windows, where nothing is
// installed system-wide, the folder of the running program (a package
// unpacked anywhere carries its data beside its programs).
// $VKAMP_SHARED_DATA_DIR names another folder.
std::string shared_data_dir();

// The local time now, broken down (localtime_r / localtime_s): a chat
// template's strftime_now reads it.
std::tm local_time_now();

// Whether this is Windows (for tests that cannot apply there, to say so).
bool running_on_windows();

// The Python interpreter for helper scripts (benchmark peers): Debian's
// /usr/bin/python3 (the one with python3-torch), else `python` in PATH.
std::string python_interpreter();

// Lavapipe complains on stderr unless XDG_RUNTIME_DIR names a private,
// writable folder; where it does not, this makes one and sets it. Windows
// has no such variable, and this does nothing there.
void ensure_runtime_dir();

}  // namespace vkamp::platform
